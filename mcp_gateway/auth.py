"""Who is calling the MCP endpoint: the tenant from the path, the caller from the bearer token."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcp_gateway.exceptions import GatewayRefused
from oauth.access import caller_for_access_token
from oauth.tokens import is_access_token
from tenants.callers import Caller, caller_for_token
from tenants.exceptions import InvalidToken
from tenants.lookups import tenant_by_slug, tenant_with_token
from tenants.models import Tenant
from tenants.tokens import parse_token

GATEWAY_SCOPE_KEY = "lcp.gateway"
# The request being served, for SDK hooks that get no request context (get_tool_input_schema).
current_request: ContextVar[GatewayRequest | None] = ContextVar("lcp_gateway_request", default=None)
MCP_OFF = "The MCP server is switched off for this tenant (setting mcpServer)."


@dataclass(frozen=True)
class GatewayRequest:
    """The tenant (loaded fresh for this HTTP request) and the caller it authenticated."""

    tenant: Tenant
    caller: Caller


def endpoint_tenant(slug: str) -> Tenant:
    """The tenant served at ``/t/<slug>/mcp``, if that endpoint exists (its metadata exists alike).

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint.
    """
    return _open_endpoint(tenant_by_slug(slug))  # every request asks: a prepared lookup


def _open_endpoint(tenant: Tenant | None) -> Tenant:
    if tenant is None:
        raise GatewayRefused(404, "Unknown tenant.")
    if not tenant.setting("mcpServer"):
        raise GatewayRefused(404, MCP_OFF)
    return tenant


def verify_bearer(slug: str, raw: str) -> tuple[GatewayRequest, str | None]:
    """The tenant of ``/t/<slug>/mcp`` and the caller its bearer token proves: the gateway's
    synchronous core of ``endpoint_auth.EndpointTokenVerifier``.

    The token is a static API token, or an OAuth access token (``lcpo_``). Also returns the
    token's audience, which the caller must check against the endpoint's URL: the resource an
    OAuth token was issued for (RFC 8707; None if not exactly one), and None for an API token,
    which is good at its own tenant's endpoint only.

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint.
        InvalidToken: a malformed, expired, revoked or other tenant's token.
    """
    if is_access_token(raw):
        tenant = endpoint_tenant(slug)
        caller, audience = caller_for_access_token(tenant, raw)
        return GatewayRequest(tenant=tenant, caller=caller), audience
    try:
        key_id, _secret = parse_token(raw)
    except InvalidToken:
        endpoint_tenant(slug)  # an unknown tenant is a 404 before any token is judged
        raise
    tenant, token = tenant_with_token(slug, key_id)
    tenant = _open_endpoint(tenant)
    return GatewayRequest(tenant=tenant, caller=caller_for_token(tenant, raw, token)), None


def gateway_request(ctx: ServerRequestContext) -> GatewayRequest:
    """The authenticated request an MCP handler serves (set on the ASGI scope by ``http.py``)."""
    request = ctx.request
    found = request.scope.get(GATEWAY_SCOPE_KEY) if request is not None else None
    if found is None:  # only reachable if the server were mounted without the auth layer
        raise MCPError(types.INVALID_REQUEST, "Not authenticated")
    return found
