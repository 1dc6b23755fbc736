"""The consent page of the platform's OAuth server, completed with the gateway's own catalog.

The page shows the tools a connection will see. Those are exactly what ``tools/list`` answers
for the consenting user (``visible_tools``, the gateway's per-caller catalog), so the view lives
above the gateway: ``mcp_gateway -> oauth -> tenants``, and nothing in ``oauth`` imports this.
"""

from __future__ import annotations

from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.tools.call.calls import visible_tools
from mcp_gateway.transport.auth import endpoint_tenant
from oauth.consent import ConsentView, ToolLine
from tenants.callers import Caller
from tenants.models import Tenant


class EndpointMissing(LookupError):
    """No MCP endpoint for that tenant: unknown, or switched off (setting mcpServer)."""


class GatewayConsentView(ConsentView):
    def endpoint_tenant(self, slug: str) -> Tenant:
        try:
            return endpoint_tenant(slug)
        except GatewayRefused as refused:
            raise EndpointMissing(refused.message) from refused

    def consent_tools(self, tenant: Tenant, caller: Caller) -> list[ToolLine]:
        return [
            ToolLine(name=entry.wire_name, title=entry.tool.title, read_only=entry.read_only)
            for entry in visible_tools(tenant, caller)
        ]
