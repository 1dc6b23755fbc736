"""``lcp``: build, deploy and watch a tenant's apps from a laptop, over the platform's REST API and MCP."""
