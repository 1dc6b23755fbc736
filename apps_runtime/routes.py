"""Route keys ("GET /cases/{case_id}") compiled to matchers."""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps_runtime.auth_expr import AuthExpr, parse_auth
from apps_runtime.exceptions import MethodNotAllowed, RouteNotFound

_PARAM = re.compile(r"^\{([a-z_][a-z0-9_]*)\}$")


@dataclass(frozen=True)
class Route:
    key: str
    method: str
    path: str
    handler: str
    auth: AuthExpr
    timeout_ms: int | None
    params: tuple[str, ...]
    pattern: re.Pattern
    # "isolation": "call" (the route's, else the app's): a fresh sandbox child per call, no warm worker.
    isolated_calls: bool = False


def compile_route(key: str, spec: dict, app_isolation: str | None = None) -> Route:
    """A matcher for one validated route entry of a manifest (``app_isolation``: the app's ``isolation``)."""
    method, path = key.split(" ", 1)
    params, parts = [], []
    for segment in path.strip("/").split("/") if path != "/" else []:
        match = _PARAM.match(segment)
        if match:
            params.append(match.group(1))
            parts.append(f"(?P<{match.group(1)}>[^/]+)")
        else:
            parts.append(re.escape(segment))
    pattern = re.compile("^/" + "/".join(parts) + "$")
    return Route(
        key=key,
        method=method,
        path=path,
        handler=spec["handler"],
        auth=parse_auth(spec["auth"]),
        timeout_ms=spec.get("timeoutMs"),
        params=tuple(params),
        pattern=pattern,
        isolated_calls=spec.get("isolation", app_isolation) == "call",
    )


class RouteTable:
    """The routes of one app version, matched by method and path."""

    def __init__(self, routes: dict[str, dict], app_isolation: str | None = None):
        self.by_key = {key: compile_route(key, spec, app_isolation) for key, spec in routes.items()}
        # Literal segments win over parameters: "/cases/search" before "/cases/{case_id}".
        self._ordered = sorted(self.by_key.values(), key=lambda r: len(r.params))

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]]:
        """The route serving ``method path`` and its path parameters.

        Raises:
            RouteNotFound: no route has this path (internal routes count as absent).
            MethodNotAllowed: the path exists with other methods only.
        """
        allowed: set[str] = set()
        for route in self._ordered:
            found = route.pattern.match(path)
            if found is None or route.auth.kind == "internal":
                continue
            if route.method == method:
                return route, found.groupdict()
            allowed.add(route.method)
        if allowed:
            raise MethodNotAllowed(method, sorted(allowed))
        raise RouteNotFound(path)


# The tenant setting that makes ``confirm`` tools wait for a person's yes (mcp_gateway's confirmation
# reads it too): while it is on, their routes are refused on the front-end path, where nobody is asked.
CONFIRM_SETTING = "confirmDestructiveTools"


def confirm_routes(manifest: dict) -> frozenset[str]:
    """The keys of the routes behind the manifest's ``confirm`` tools."""
    tools = (manifest.get("mcp") or {}).get("tools") or []
    return frozenset(tool["route"] for tool in tools if tool.get("confirm") and tool.get("route"))
