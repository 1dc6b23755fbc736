"""The platform's public origin, and the URLs of a tenant's MCP endpoint: one rule for OAuth and the gateway.

Behind TLS and a proxy the origin a client uses cannot be read off the request reliably (the scheme
the platform sees is http), so production names it in ``PUBLIC_BASE_URL``. Only in DEBUG is it taken
from the request (its Host already checked against ALLOWED_HOSTS), so a local demo works without
configuration. Outside DEBUG without ``PUBLIC_BASE_URL`` there is no origin: OAuth is unavailable,
the MCP endpoint's 401 names no metadata and links to app routes are refused, alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

# A tenant slug: ``tenants.models.SLUG_RE`` is this pattern anchored (the path shape needs it, and
# core imports no domain package).
SLUG_PATTERN = r"[a-z0-9][a-z0-9-]{0,39}"
_SLUG = rf"(?P<slug>{SLUG_PATTERN})"
MCP_PATH = re.compile(rf"^/t/{_SLUG}/mcp$")
METADATA_PATH = re.compile(rf"^/\.well-known/oauth-protected-resource/t/{_SLUG}/mcp$")


def public_origin(scheme: str, host: str) -> str | None:
    """The origin clients reach the platform at (``https://platform.example``): PUBLIC_BASE_URL,
    else the request's own in DEBUG only, else None."""
    configured = settings.PUBLIC_BASE_URL
    if configured:
        return configured
    if settings.DEBUG:
        return f"{scheme}://{host}"
    return None


def scope_origin(scope: Mapping[str, Any]) -> str | None:
    """``public_origin`` for an ASGI request (the transport checks its Host first)."""
    host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "localhost")
    return public_origin(scope.get("scheme", "http"), host)


def mcp_endpoint_url(origin: str, slug: str) -> str:
    """A tenant's MCP endpoint: the RFC 8707 resource its OAuth tokens are issued for."""
    return f"{origin}/t/{slug}/mcp"


def resource_metadata_url(origin: str, slug: str) -> str:
    """Where the endpoint's RFC 9728 protected-resource metadata is served."""
    return f"{origin}/.well-known/oauth-protected-resource/t/{slug}/mcp"
