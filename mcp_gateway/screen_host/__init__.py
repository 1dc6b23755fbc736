"""The front-end path's screen host: a page of the platform's own that shows an app's screen in a
sandboxed frame and bridges it to the gateway's tools/call, as an MCP Apps chat host does."""
