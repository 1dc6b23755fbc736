"""The built-in search_tools: ranking a caller's tools by what the user asks for."""
