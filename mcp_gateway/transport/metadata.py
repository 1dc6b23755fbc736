"""RFC 9728 protected-resource metadata of a tenant's MCP endpoint, as the SDK's model has it.

Served at ``/.well-known/oauth-protected-resource/t/<tenant>/mcp`` only where the endpoint exists,
and only where the platform has a public origin (``core.origin``) to name it by.
"""

from __future__ import annotations

from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.types import Scope, Send

from core.origin import mcp_endpoint_url, scope_origin
from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.transport.auth import endpoint_tenant
from mcp_gateway.transport.responses import send_error, send_json
from oauth.access import MCP_SCOPE, app_scopes
from oauth.exceptions import OriginNotConfigured


class _ResourceMetadata(ProtectedResourceMetadata):
    # Optional in RFC 9728, which the SDK's model (every server has OAuth there) does not follow.
    authorization_servers: list[AnyHttpUrl] | None = None  # type: ignore[assignment]


def resource_metadata(origin: str, slug: str, issuer: str | None, apps: list[str] | None = None) -> dict:
    """RFC 9728 metadata of the endpoint: bearer tokens in the header, issued by the platform's
    authorization server ``issuer`` (None: the platform offers no OAuth here); ``apps``: the app
    scopes a connection may be narrowed to (``oauth.access.app_scopes``).
    """
    # Validated from a dict: the model parses the URLs from the strings (its constructor's types say
    # AnyHttpUrl, which pydantic would make of them the same way).
    metadata = _ResourceMetadata.model_validate(
        {
            "resource": mcp_endpoint_url(origin, slug),
            "authorization_servers": [issuer] if issuer is not None else None,
            "scopes_supported": [MCP_SCOPE, *(apps or [])] if issuer is not None else None,
            "bearer_methods_supported": ["header"],
            "resource_name": f"MCP endpoint of tenant {slug}",
            "resource_documentation": f"{origin}/api/schema/",
        }
    )
    return metadata.model_dump(mode="json", exclude_none=True)


async def serve_metadata(scope: Scope, send: Send, slug: str) -> None:
    """Answer the metadata request: 404 where the endpoint does not exist (an unknown tenant, a
    switched-off endpoint), 503 without a public origin (as the authorization server's metadata)."""
    try:
        tenant = await in_thread(endpoint_tenant, slug)
    except GatewayRefused as refused:
        await send_error(send, refused.status, refused.message)
        return
    origin = scope_origin(scope)
    if origin is None:
        await send_error(send, 503, str(OriginNotConfigured()))
        return
    # The issuer is the platform's own authorization server (oauth/), at the same origin.
    await send_json(
        send,
        200,
        resource_metadata(origin, slug, origin, await in_thread(app_scopes, tenant)),
        [(b"cache-control", b"public, max-age=3600"), (b"access-control-allow-origin", b"*")],
    )
