"""Builders: the builder MCP endpoint for tenant admins and the handler test kit."""
