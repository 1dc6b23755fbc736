"""Absolute URLs the gateway hands out: the public origin, and links to an app's own routes.

The origin is ``core.origin``'s rule (``PUBLIC_BASE_URL``, else the request's own in DEBUG only),
the same the OAuth metadata and the protected-resource metadata use. A tool call records it for the
result mapping, which runs in a worker thread (context variables go along, see ``concurrency``). A
task keeps the origin of the call that created it, for its run, which has no request of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.urls import reverse
from starlette.types import Scope

from core.origin import scope_origin

_call_origin: ContextVar[str | None] = ContextVar("lcp_call_origin", default=None)


class NoLinkOrigin(Exception):
    """No origin to build an absolute link with: PUBLIC_BASE_URL unset, and outside a request or DEBUG."""

    def __init__(self) -> None:
        super().__init__("links to app routes need PUBLIC_BASE_URL outside an MCP request")


def remember_call_origin(scope: Scope | None) -> None:
    """Record the origin of the request a tool call serves (in the call's own context)."""
    _call_origin.set(scope_origin(scope) if scope is not None else None)


def remembered_call_origin() -> str:
    """The origin recorded for the current call ("" outside one), for a task to keep."""
    return _call_origin.get() or ""


@contextmanager
def call_origin(origin: str) -> Iterator[None]:
    """Within this block, links use ``origin`` (a task's run: the origin its task was created through)."""
    token = _call_origin.set(origin or None)
    try:
        yield
    finally:
        _call_origin.reset(token)


def platform_origin() -> str | None:
    """The origin clients reach this server at, for the call being served (None without
    PUBLIC_BASE_URL outside a request, or outside DEBUG)."""
    return settings.PUBLIC_BASE_URL or _call_origin.get()


def app_route_url(tenant_slug: str, app_name: str, route_path: str) -> str:
    """The absolute URL of ``route_path`` (``/cases/42?tab=notes``) under the app's front-end path.

    Raises:
        NoLinkOrigin: outside a request, with PUBLIC_BASE_URL unset.
    """
    origin = platform_origin()
    if not origin:
        raise NoLinkOrigin()
    path, _, query = route_path[1:].partition("?")
    url = reverse("app-route", kwargs={"tenant_slug": tenant_slug, "app_name": app_name, "route_path": path})
    return f"{origin}{url}" + (f"?{query}" if query else "")
