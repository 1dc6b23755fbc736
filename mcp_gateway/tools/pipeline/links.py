"""Absolute URLs the gateway hands out: links to an app's own routes.

The origin is ``core.origin``'s rule (``PUBLIC_BASE_URL``, else the request's own in DEBUG only),
the same the OAuth metadata and the protected-resource metadata use; a call carries it in its
``CallContext.link_origin``. A task keeps the origin of the call that created it, for its run,
which has no request of its own.
"""

from __future__ import annotations

from django.urls import reverse


class NoLinkOrigin(Exception):
    """No origin to build an absolute link with: PUBLIC_BASE_URL unset, and outside a request or DEBUG."""

    def __init__(self) -> None:
        super().__init__("links to app routes need PUBLIC_BASE_URL outside an MCP request")


def app_route_url(origin: str | None, tenant_slug: str, app_name: str, route_path: str) -> str:
    """The absolute URL of ``route_path`` (``/cases/42?tab=notes``) under the app's front-end path,
    at ``origin`` (the call's ``link_origin``).

    Raises:
        NoLinkOrigin: no origin (outside a request, with PUBLIC_BASE_URL unset).
    """
    if not origin:
        raise NoLinkOrigin()
    path, _, query = route_path[1:].partition("?")
    url = reverse("app-route", kwargs={"tenant_slug": tenant_slug, "app_name": app_name, "route_path": path})
    return f"{origin}{url}" + (f"?{query}" if query else "")
