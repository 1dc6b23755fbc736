"""Who may use ``/t/<tenant>/builder/mcp``: a tenant admin, by API token or OAuth connection.

The bearer token is checked by the gateway's own ``verify_bearer`` (the same tokens, the same 404 for
an unknown tenant or a switched-off MCP server); an OAuth access token must have been issued for the
tenant's MCP endpoint or for this one (RFC 8707). Then the caller must be a tenant admin (or a
platform superuser) holding a token that may write: anyone else gets 403.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from builder.exceptions import BuilderRefused
from builder.server import BuilderRequest
from core.origin import mcp_endpoint_url
from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.transport.auth import TOKEN_INVALID, TOKEN_REQUIRED, verify_bearer
from tenants.exceptions import InvalidToken

NOT_ADMIN = "Only tenant admins may build apps here (with a token that is not read-only)."


def builder_url(origin: str, slug: str) -> str:
    return f"{origin}/t/{slug}/builder/mcp"


def admin_request(slug: str, authorization: str | None, origin: str | None) -> BuilderRequest:
    """The tenant and the admin an ``Authorization`` header proves at ``slug``'s builder endpoint.

    Raises:
        BuilderRefused: 401 without a valid token, 403 for a caller who is not a tenant admin (or a
            read-only token), 404 for an unknown tenant or a switched-off MCP server.
    """
    scheme, _, raw = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        raise BuilderRefused(401, TOKEN_REQUIRED)
    try:
        gateway, audience = verify_bearer(slug, raw.strip())
    except InvalidToken:
        raise BuilderRefused(401, TOKEN_INVALID) from None
    except GatewayRefused as refused:
        raise BuilderRefused(refused.status, refused.message) from None
    caller = gateway.caller
    if caller.oauth_grant_id is not None:
        allowed = {mcp_endpoint_url(origin, slug), builder_url(origin, slug)} if origin else set()
        if audience not in allowed:
            raise BuilderRefused(401, TOKEN_INVALID)
    if not caller.is_tenant_admin or caller.read_only or caller.user_id is None:
        raise BuilderRefused(403, NOT_ADMIN)
    user = get_user_model().objects.get(pk=caller.user_id)
    return BuilderRequest(tenant=gateway.tenant, user=user)
