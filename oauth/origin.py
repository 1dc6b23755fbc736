"""The platform's public origin: the OAuth issuer, and the origin of every tenant's MCP resource URL.

Behind TLS and a proxy the origin a client uses cannot be read off the request reliably, so
production names it in ``PUBLIC_BASE_URL``. Only in DEBUG is it derived from the request (its
Host already checked against ALLOWED_HOSTS), so a local demo works without configuration.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.http import HttpRequest

from oauth.exceptions import OriginNotConfigured, UnknownResource

MCP_PATH = re.compile(r"^/t/(?P<slug>[a-z0-9][a-z0-9-]{0,39})/mcp$")


def public_origin(scheme: str, host: str) -> str:
    """The origin clients reach the platform at, e.g. ``https://platform.example``.

    Raises:
        OriginNotConfigured: PUBLIC_BASE_URL is unset and DEBUG is off.
    """
    configured = settings.PUBLIC_BASE_URL
    if configured:
        return configured
    if not settings.DEBUG:
        raise OriginNotConfigured()
    return f"{scheme}://{host}"


def request_origin(request: HttpRequest) -> str:
    """``public_origin`` for a Django request (its Host validated by Django).

    Raises:
        OriginNotConfigured: PUBLIC_BASE_URL is unset and DEBUG is off.
    """
    if settings.PUBLIC_BASE_URL:
        return settings.PUBLIC_BASE_URL
    return public_origin(request.scheme, request.get_host())


def resource_url(origin: str, slug: str) -> str:
    """The RFC 8707 resource indicator of a tenant's MCP endpoint."""
    return f"{origin}/t/{slug}/mcp"


def slug_of_resource(origin: str, resource: str) -> str:
    """The tenant slug a resource indicator names (exactly ``<origin>/t/<slug>/mcp``).

    Raises:
        UnknownResource: anything else: another origin, another path, a query or fragment.
    """
    if not resource.startswith(origin + "/"):
        raise UnknownResource(resource)
    match = MCP_PATH.match(resource[len(origin) :])
    if match is None:
        raise UnknownResource(resource)
    return match["slug"]
