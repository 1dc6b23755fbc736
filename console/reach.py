"""Who a tool reaches, in words, for the Tools page (the catalog itself decides; this only describes)."""

from __future__ import annotations

from apps_runtime.auth_expr import AuthExpr
from mcp_gateway.tools.catalog.builtins import SEARCH_TOOLS
from mcp_gateway.tools.catalog.catalog import CatalogEntry

EVERY_MEMBER = "every member"
# What a built-in checks per call, when it is not the record tools' per-collection check.
BUILTIN_REACH = {SEARCH_TOOLS: "finds only the tools the caller may see and call"}


def _roles(expr: AuthExpr) -> str:
    return ", ".join(sorted(expr.roles))


def who_reaches(entry: CatalogEntry) -> str:
    """The callers (besides platform superusers) who see ``entry``, e.g. "members with case_reader"."""
    if entry.builtin is not None:
        return f"{EVERY_MEMBER} ({BUILTIN_REACH.get(entry.builtin, 'records checked per collection')})"
    access, route = entry.access, entry.route_auth
    if route.kind == "internal":
        return "nobody (internal route)"
    if route.kind == "public":
        return "anyone with a token of this tenant (public route)"
    restricting = [expr for expr in (access, route) if expr.kind == "role"]
    if not restricting:
        return EVERY_MEMBER
    if len(restricting) == 1:
        return f"members with any of: {_roles(restricting[0])}"
    if access.roles == route.roles:
        return f"members with any of: {_roles(route)}"
    return f"members with one of ({_roles(access)}) for the app and one of ({_roles(route)}) for the route"
