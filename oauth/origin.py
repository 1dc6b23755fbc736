"""The platform's public origin as OAuth needs it: the issuer, and every tenant's MCP resource URL.

The rule is ``core.origin.public_origin``; here a missing origin is an error, since OAuth cannot
work without one.
"""

from __future__ import annotations

from django.http import HttpRequest

from core.origin import MCP_PATH, public_origin
from oauth.exceptions import OriginNotConfigured, UnknownResource


def request_origin(request: HttpRequest) -> str:
    """``core.origin.public_origin`` for a Django request (its Host validated by Django).

    Raises:
        OriginNotConfigured: PUBLIC_BASE_URL is unset and DEBUG is off.
    """
    origin = public_origin(request.scheme, request.get_host())
    if origin is None:
        raise OriginNotConfigured()
    return origin


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
