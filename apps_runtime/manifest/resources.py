"""Deploy checks of ``mcp.resources``: what the manifest schema cannot say.

- exactly one source: ``file`` (a bundle file, at most ``FILE_MAX_BYTES``), ``route`` (a GET route
  of the app that is not internal) or ``collection`` (a collection of the app);
- names unique in the app; ``uri`` unique in the app, and no two templates of the same shape;
- a route's template variables are exactly its path parameters; a collection's template has one
  variable; a file's URI has none;
- ``variables`` name variables of the URI, and their ``complete`` routes are GET routes;
- ``auth`` only on files (a route has its own auth, a collection its ``read``);
- no resources in an app whose URI scheme (its name) is a well-known one (``RESERVED_SCHEMES``).

Every problem is at its JSON pointer; values of the wrong type are left to the schema pass.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from apps_runtime.auth_expr import AuthExpr
from apps_runtime.manifest import schema as s
from apps_runtime.manifest.problems import Problem, child, pointer, shorten
from apps_runtime.resource_uris import RECORD_VARIABLE, RESERVED_SCHEMES, default_path, scheme, variables

KiB = 1024
FILE_MAX_BYTES = 1024 * KiB
SOURCES = ("file", "route", "collection")
_URI = re.compile(s.RESOURCE_URI_PATTERN)
_DEFAULT_MIME = "application/octet-stream"


class RouteInfo(Protocol):
    method: str
    params: tuple[str, ...]
    auth: AuthExpr | None


def iter_items(manifest: Any, key: str) -> Iterator[tuple[int, dict]]:
    """(index, item) for each object of ``mcp.<key>``; tolerates any manifest."""
    mcp = manifest.get("mcp") if isinstance(manifest, dict) else None
    items = mcp.get(key) if isinstance(mcp, dict) else None
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def resource_path(resource: dict, route_params: tuple[str, ...] | None) -> str | None:
    """The resource's ``uri`` (after ``<app>://``), defaulted; None when it cannot be known.

    ``route_params``: the path parameters of the resource's route (None: no route, or unknown).
    """
    if isinstance(resource.get("uri"), str):
        return resource["uri"]
    name = resource.get("name")
    if not isinstance(name, str):
        return None
    if "route" in resource:
        return default_path(name, route_params) if route_params is not None else None
    if isinstance(resource.get("collection"), str):
        return default_path(name, (RECORD_VARIABLE,))
    return name


def mime_type(resource: dict) -> str:
    """The resource's MIME type: its ``mimeType``, else guessed from a file's name, else JSON for routes
    and records."""
    if isinstance(resource.get("mimeType"), str):
        return resource["mimeType"]
    if isinstance(resource.get("file"), str):
        return mimetypes.guess_type(resource["file"], strict=False)[0] or _DEFAULT_MIME
    return "application/json"


def check_get_route(
    key: Any, ptr: str, manifest: Any, routes: Mapping[str, RouteInfo], what: str
) -> list[Problem]:
    """Problems of ``key`` as a GET route that is not internal (a resource, prompt or completion route)."""
    if not isinstance(key, str):
        return []
    declared = manifest.get("routes") if isinstance(manifest, dict) else None
    if not isinstance(declared, dict):
        return []
    if key not in declared:
        gets = [k for k in declared if isinstance(k, str) and k.startswith("GET ")]
        hint = "use one of " + shorten(", ".join(repr(k) for k in gets)) if gets else "add a GET route"
        return [Problem(ptr, f"{key!r} is not a route of this app: {hint}")]
    route = routes.get(key)
    if route is None:
        return []  # the route key itself is reported
    if route.method != "GET":
        return [Problem(ptr, f"route {key!r} is not a GET route: {what} only read, so use a GET route")]
    if route.auth is not None and route.auth.is_internal:
        return [
            Problem(ptr, f"route {key!r} is internal: {what} need a route with public, user or role auth")
        ]
    return []


def check_file(path: Any, ptr: str, files: Mapping[str, int]) -> list[Problem]:
    """Problems of ``path`` as a bundle file served to clients."""
    if not isinstance(path, str):
        return []
    if path not in files:
        return [Problem(ptr, f"file {path!r} is not in the bundle: add it or fix the path")]
    if path == "app.json" or path.endswith(".py"):
        return [Problem(ptr, f"file {path!r} is the app's code or manifest: serve a document or image")]
    if files[path] > FILE_MAX_BYTES:
        return [
            Problem(
                ptr,
                f"file {path!r} is {files[path]:,} bytes, over the limit of {FILE_MAX_BYTES:,}: "
                "shrink or split it",
            )
        ]
    return []


def resource_problems(
    manifest: Any, routes: Mapping[str, RouteInfo], files: Mapping[str, int]
) -> list[Problem]:
    """Every problem of ``mcp.resources``; ``files`` maps bundle paths to their sizes."""
    problems: list[Problem] = []
    names: dict[str, int] = {}
    uris: dict[str, int] = {}
    shapes: dict[tuple, int] = {}
    collections = manifest.get("collections") if isinstance(manifest, dict) else None
    app_name = manifest.get("name") if isinstance(manifest, dict) else None
    if (
        isinstance(app_name, str)
        and scheme(app_name) in RESERVED_SCHEMES
        and any(iter_items(manifest, "resources"))
    ):
        problems.append(
            Problem(
                pointer("mcp", "resources"),
                f"an app's resource URIs start with its name ({scheme(app_name)}://...), and "
                f"{scheme(app_name)}:// is a well-known scheme clients treat otherwise: rename the app",
            )
        )
    for index, resource in iter_items(manifest, "resources"):
        base = pointer("mcp", "resources", index)
        name = resource.get("name")
        if isinstance(name, str):
            if name in names:
                problems.append(
                    Problem(
                        child(base, "name"),
                        f"resource name {name!r} is already used by /mcp/resources/{names[name]}: "
                        "resource names must be unique in the app",
                    )
                )
            else:
                names[name] = index
        sources = [key for key in SOURCES if key in resource]
        if len(sources) != 1:
            given = ", ".join(sources) if sources else "none"
            problems.append(
                Problem(base, f"a resource needs exactly one of file, route or collection (given: {given})")
            )
        if "file" in resource:
            problems += check_file(resource["file"], child(base, "file"), files)
        if "route" in resource:
            problems += check_get_route(
                resource["route"], child(base, "route"), manifest, routes, "resources"
            )
        if "auth" in resource and "file" not in resource:
            problems.append(
                Problem(
                    child(base, "auth"),
                    "auth is for file resources only: a route resource follows its route's auth, a "
                    "collection its read rule",
                )
            )
        collection = resource.get("collection")
        if isinstance(collection, str) and isinstance(collections, dict) and collection not in collections:
            problems.append(
                Problem(child(base, "collection"), f"{collection!r} is not a collection of this app")
            )
        route = routes.get(resource["route"]) if isinstance(resource.get("route"), str) else None
        path = resource_path(resource, route.params if route is not None else None)
        if path is None or not _URI.fullmatch(path):
            continue  # the schema reports a bad uri
        problems += _uri_problems(resource, path, base, routes)
        if path in uris:
            problems.append(
                Problem(
                    child(base, "uri"),
                    f"URI {path!r} is already used by /mcp/resources/{uris[path]}: choose another uri",
                )
            )
            continue
        uris[path] = index
        shape = tuple("{}" if seg.startswith("{") else seg for seg in path.split("/"))
        if shape in shapes and shape != tuple(path.split("/")):
            problems.append(
                Problem(
                    child(base, "uri"),
                    f"URI template {path!r} matches the same URIs as /mcp/resources/{shapes[shape]}: "
                    "change a literal segment of one of them",
                )
            )
        shapes.setdefault(shape, index)
    return problems


def _uri_problems(resource: dict, path: str, base: str, routes: Mapping[str, RouteInfo]) -> list[Problem]:
    problems = []
    found = variables(path)
    ptr = child(base, "uri")
    dots = [seg for seg in path.split("/") if seg in (".", "..")]
    if dots:
        problems.append(Problem(ptr, f"URI {path!r} has a {dots[0]!r} segment: write the URI without it"))
    if len(set(found)) != len(found):
        problems.append(Problem(ptr, f"URI {path!r} repeats a variable: each may appear once"))
    if "file" in resource and found:
        problems.append(Problem(ptr, f"URI {path!r} has variables, but a file is one resource: remove them"))
    route_key = resource.get("route")
    route = routes.get(route_key) if isinstance(route_key, str) else None
    if route is not None and set(found) != set(route.params):
        problems.append(
            Problem(
                ptr,
                f"URI {path!r} must have exactly the path parameters of route {route_key!r} as its "
                f"variables ({', '.join(route.params) or 'none'}), not {', '.join(found) or 'none'}",
            )
        )
    if "collection" in resource and len(found) != 1:
        problems.append(
            Problem(ptr, f"URI {path!r} of a collection needs exactly one variable, the record id")
        )
    declared = resource.get("variables")
    if isinstance(declared, dict):
        for name, spec in declared.items():
            at = child(base, "variables", name)
            if name not in found:
                problems.append(Problem(at, f"{name!r} is not a variable of URI {path!r}"))
            if isinstance(spec, dict) and "complete" in spec and "enum" in spec:
                problems.append(Problem(at, "give enum or complete, not both"))
    return problems


def completion_route_problems(
    spec: Any, ptr: str, manifest: Any, routes: Mapping[str, RouteInfo]
) -> list[Problem]:
    """Problems of an argument's or variable's ``complete`` route."""
    if not isinstance(spec, dict) or "complete" not in spec:
        return []
    return check_get_route(spec["complete"], child(ptr, "complete"), manifest, routes, "completions")
