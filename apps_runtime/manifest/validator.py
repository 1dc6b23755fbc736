"""The deploy validator: every problem of a manifest at once, plus client-compatibility warnings.

Two passes run on every manifest, even a partly broken one:

1. ``MANIFEST_SCHEMA`` (structure: types, required keys, unknown keys, ranges; ``structure.py``);
2. the semantic checks here, for what a schema cannot express, each skipping values whose type is
   already wrong.

Both say what to change. Where both report the same pointer, the semantic message is kept
because it is the more specific one.
"""

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from apps_runtime.auth_expr import AuthExpr, InvalidAuthExpression, parse_auth
from apps_runtime.json_schemas import is_plain_json
from apps_runtime.manifest import schema as s
from apps_runtime.manifest.compatibility import compatibility_warnings, iter_tools
from apps_runtime.manifest.cron import InvalidCronExpression, parse_cron
from apps_runtime.manifest.egress import egress_problems
from apps_runtime.manifest.embedded_schemas import embedded_schema_problems
from apps_runtime.manifest.long_runs import long_run_problems
from apps_runtime.manifest.output_warnings import output_warnings
from apps_runtime.manifest.problems import DeployRejected, Problem, child, ordered, pointer, shorten
from apps_runtime.manifest.prompts import prompt_problems
from apps_runtime.manifest.resources import resource_problems
from apps_runtime.manifest.screens import screen_problems
from apps_runtime.manifest.structure import NAME_HINT, schema_problems
from tenants.rate_limit_rule import rate_limit_problems

_APP_NAME = re.compile(s.APP_NAME_PATTERN)
_KEY_NAME = re.compile(s.COLLECTION_NAME_PATTERN)
_TOOL_NAME = re.compile(s.TOOL_NAME_PATTERN)
_PARAM_NAME = re.compile(s.PARAM_NAME_PATTERN)
_LITERAL_SEGMENT = re.compile(s.LITERAL_SEGMENT_PATTERN)
_DRIVE = re.compile(r"^[A-Za-z]:")

ONLY_CONFIRM = '{} applies to confirm tools (approval before the route runs): add "confirm": true'


@dataclass(frozen=True)
class _Route:
    method: str
    segments: tuple[str, ...]
    params: tuple[str, ...]
    auth: AuthExpr | None  # None when the auth expression is invalid

    @property
    def shape(self) -> tuple[str, tuple[str, ...]]:
        """The route with parameter names blanked: two routes with one shape conflict."""
        return self.method, tuple("{}" if seg.startswith("{") else seg for seg in self.segments)


def validate_manifest(manifest: Any, files: Collection[str] | Mapping[str, bytes]) -> list[Problem]:
    """Check a manifest for deploy and return its client-compatibility warnings.

    ``files`` holds the bundle-relative POSIX paths present in the bundle, or maps them to their
    contents (then the size caps of served files are checked too). Wire names need the
    tenant (its prefix, the names its other apps hold): the deploy checks them (``deploy.py``).

    Raises:
        DeployRejected: with every problem found (and the warnings), never just the first.
    """
    plain = is_plain_json(manifest)  # once for the whole manifest, for the jsonschema-rs fast paths
    sizes = (
        {path: len(data) for path, data in files.items()}
        if isinstance(files, Mapping)
        else dict.fromkeys(files, 0)
    )
    checker = _Checker(manifest, sizes, plain=plain, contents=files if isinstance(files, Mapping) else None)
    checker.run()
    covered = {problem.pointer for problem in checker.problems}
    found = schema_problems(manifest, plain=plain)
    structural = [problem for problem in found if problem.pointer not in covered]
    problems = ordered(checker.problems + structural)
    warnings = ordered([*compatibility_warnings(manifest), *output_warnings(manifest)])
    if problems:
        raise DeployRejected(problems, warnings=warnings)
    return warnings


class _Checker:
    """The semantic checks; each one skips values the schema pass already rejects by type."""

    def __init__(
        self,
        manifest: Any,
        sizes: dict[str, int],
        *,
        plain: bool,
        contents: Mapping[str, bytes] | None = None,
    ):
        self.manifest = manifest if isinstance(manifest, dict) else {}
        self.contents = contents
        self.files = frozenset(sizes)
        self.sizes = sizes
        self.plain = plain
        self.problems: list[Problem] = []
        self.routes: dict[str, _Route] = {}

    def add(self, ptr: str, message: str) -> None:
        self.problems.append(Problem(ptr, message))

    def run(self) -> None:
        manifest = self.manifest
        name = manifest.get("name")
        if isinstance(name, str) and not _APP_NAME.fullmatch(name):
            self.add(pointer("name"), f"app name {name!r} must match {s.APP_NAME_PATTERN}: {NAME_HINT}")
        if "access" in manifest:
            self.check_auth(manifest["access"], pointer("access"), "access")
        self.check_collections()
        self.check_routes()
        self.check_tools()
        self.check_jobs()
        self.problems += resource_problems(manifest, self.routes, self.sizes)
        self.problems += prompt_problems(manifest, self.routes, self.sizes)
        self.problems += screen_problems(manifest, self.sizes, self.contents)
        self.problems += long_run_problems(manifest)
        self.problems += egress_problems(manifest)

    def check_auth(self, value: Any, ptr: str, what: str) -> AuthExpr | None:
        if not isinstance(value, str):
            return None
        try:
            return parse_auth(value)
        except InvalidAuthExpression as err:
            self.add(ptr, f"{what} {value!r} is not a valid auth expression: {err.reason}")
            return None

    def check_key_name(self, ptr: str, kind: str, name: str) -> None:
        if not _KEY_NAME.fullmatch(name):
            self.add(ptr, f"{kind} name {name!r} must match {s.COLLECTION_NAME_PATTERN}: {NAME_HINT}")

    def check_collections(self) -> None:
        for name, spec in _items(self.manifest.get("collections")):
            base = pointer("collections", name)
            self.check_key_name(base, "collection", name)
            if not isinstance(spec, dict):
                continue
            if isinstance(spec.get("schema"), dict):
                self.check_embedded_schema(spec["schema"], child(base, "schema"), "the collection schema")
            for key in ("read", "write"):
                if key in spec:
                    self.check_auth(spec[key], child(base, key), key)

    def check_routes(self) -> None:
        seen: dict[tuple[str, tuple[str, ...]], str] = {}
        for key, spec in _items(self.manifest.get("routes")):
            base = pointer("routes", key)
            auth = None
            if isinstance(spec, dict):
                auth = self.check_auth(spec.get("auth"), child(base, "auth"), "auth")
                if isinstance(spec.get("handler"), str):
                    self.check_handler(spec["handler"], child(base, "handler"))
            route = self.parse_route_key(key, base, auth)
            if route is None:
                continue
            if route.shape in seen:
                self.add(
                    base,
                    f"route {key!r} conflicts with {seen[route.shape]!r}: they differ only in parameter "
                    "names, so one would never be reached; remove or change one of them",
                )
                continue
            seen[route.shape] = key
            self.routes[key] = route

    def parse_route_key(self, key: str, ptr: str, auth: AuthExpr | None) -> _Route | None:
        method, space, path = key.partition(" ")
        if not space:
            self.add(ptr, f"route key {key!r} must be 'METHOD /path', e.g. 'GET /cases/{{case_id}}'")
            return None
        ok = True
        if method not in s.HTTP_METHODS:
            hint = f"; write {method.upper()!r}" if method.upper() in s.HTTP_METHODS else ""
            self.add(ptr, f"method {method!r} must be one of {', '.join(s.HTTP_METHODS)}{hint}")
            ok = False
        if not path.startswith("/"):
            self.add(ptr, f"path {path!r} must start with '/' after a single space, e.g. 'GET /cases'")
            return None
        segments = tuple(path[1:].split("/")) if path != "/" else ()
        params: list[str] = []
        for segment in segments:
            if segment == "":
                self.add(ptr, f"path {path!r} has an empty segment ('//' or a trailing '/'): remove it")
                ok = False
            elif segment in (".", ".."):
                self.add(ptr, f"path {path!r} has a {segment!r} segment: write the path without it")
                ok = False
            elif segment.startswith("{") or segment.endswith("}") or "{" in segment or "}" in segment:
                name = segment[1:-1] if segment.startswith("{") and segment.endswith("}") else None
                if name is None or not _PARAM_NAME.fullmatch(name):
                    self.add(
                        ptr,
                        f"path segment {segment!r} must be a whole parameter {{name}} with name matching "
                        f"{s.PARAM_NAME_PATTERN} (lowercase letters, digits and underscores)",
                    )
                    ok = False
                elif name in params:
                    self.add(ptr, f"path parameter {name!r} appears twice in {path!r}: rename one")
                    ok = False
                else:
                    params.append(name)
            elif not _LITERAL_SEGMENT.fullmatch(segment):
                self.add(
                    ptr,
                    f"path segment {segment!r} may contain only letters, digits and . _ ~ -: "
                    "use {name} for a parameter",
                )
                ok = False
        if not ok:
            return None
        return _Route(method=method, segments=segments, params=tuple(params), auth=auth)

    def check_handler(self, handler: str, ptr: str) -> None:
        if "\\" in handler:
            self.add(ptr, f"handler {handler!r} must use forward slashes: write it as a POSIX path")
        elif handler.startswith("/") or _DRIVE.match(handler):
            self.add(ptr, f"handler {handler!r} must be relative to the bundle root, e.g. 'server/x.py'")
        elif any(part in ("", ".", "..") for part in handler.split("/")):
            self.add(ptr, f"handler {handler!r} must not contain '..', '.' or empty segments")
        elif not handler.endswith(".py"):
            self.add(ptr, f"handler {handler!r} must be a .py file")
        elif handler not in self.files:
            self.add(ptr, f"handler file {handler!r} is not in the bundle: add it or fix the path")

    def check_embedded_schema(self, value: dict, ptr: str, what: str) -> None:
        """Object root, its metaschema, local references only, patterns RE2 can run."""
        self.problems += embedded_schema_problems(value, ptr, what, plain=self.plain)

    def check_tools(self) -> None:
        names: dict[str, int] = {}
        for index, tool in iter_tools(self.manifest):
            base = pointer("mcp", "tools", index)
            name = tool.get("name")
            if isinstance(name, str):
                if not _TOOL_NAME.fullmatch(name):
                    self.add(
                        child(base, "name"),
                        f"tool name {name!r} must match {s.TOOL_NAME_PATTERN}: use lowercase letters, "
                        "digits and underscores",
                    )
                elif name in names:
                    self.add(
                        child(base, "name"),
                        f"tool name {name!r} is already used by /mcp/tools/{names[name]}: "
                        "tool names must be unique in the app",
                    )
                else:
                    names[name] = index
            for key, label in (("inputSchema", "inputSchema"), ("outputSchema", "outputSchema")):
                if isinstance(tool.get(key), dict):
                    self.check_embedded_schema(tool[key], child(base, key), label)
            if isinstance(tool.get("route"), str):
                self.check_tool_route(tool, base)
            if "approvers" in tool:
                self.check_auth(tool["approvers"], child(base, "approvers"), "approvers")
                if tool.get("confirm") is not True:
                    self.add(child(base, "approvers"), ONLY_CONFIRM.format("approvers"))
            if "approvalTtl" in tool and tool.get("confirm") is not True:
                self.add(child(base, "approvalTtl"), ONLY_CONFIRM.format("approvalTtl"))
            if "rateLimit" in tool:
                for key, message in rate_limit_problems(tool["rateLimit"]):
                    self.add(child(base, "rateLimit", *([key] if key else [])), message)

    def check_tool_route(self, tool: dict, base: str) -> None:
        key = tool["route"]
        routes = self.manifest.get("routes")
        if not isinstance(routes, dict):
            return  # the missing or mistyped routes are reported
        if key not in routes:
            hint = (
                "use one of " + shorten(", ".join(repr(k) for k in routes)) if routes else "add it to routes"
            )
            self.add(child(base, "route"), f"{key!r} is not a route of this app: {hint}")
            return
        route = self.routes.get(key)
        if route is None:
            return  # the route key itself is reported
        if route.auth is not None and route.auth.is_internal:
            self.add(
                child(base, "route"),
                f"route {key!r} is internal, so it cannot be a tool: choose a route with public, user or "
                "role auth",
            )
            return
        input_schema = tool.get("inputSchema")
        if not isinstance(input_schema, dict):
            return
        properties = input_schema.get("properties")
        required = input_schema.get("required")
        required = required if isinstance(required, list) else []
        for param in route.params:
            if not isinstance(properties, dict) or param not in properties:
                self.add(
                    child(base, "inputSchema", "properties", param),
                    f"path parameter {param!r} of route {key!r} must be a property of inputSchema: "
                    f'add "{param}": {{"type": "string"}}',
                )
            if param not in required:
                self.add(
                    child(base, "inputSchema", "required"),
                    f"path parameter {param!r} of route {key!r} must be listed in required: add {param!r}",
                )

    def check_jobs(self) -> None:
        routes = self.manifest.get("routes")
        for name, job in _items(self.manifest.get("jobs")):
            base = pointer("jobs", name)
            self.check_key_name(base, "job", name)
            if not isinstance(job, dict):
                continue
            key = job.get("route")
            if isinstance(key, str) and isinstance(routes, dict):
                route = self.routes.get(key)
                auth = route.auth if route is not None else None
                if key not in routes:
                    self.add(child(base, "route"), f"{key!r} is not a route of this app: add it to routes")
                elif auth is not None and not auth.is_internal:
                    self.add(
                        child(base, "route"),
                        f"route {key!r} has auth {str(auth)!r}; jobs call internal routes only: "
                        "set its auth to internal",
                    )
            if isinstance(job.get("schedule"), str):
                try:
                    parse_cron(job["schedule"])
                except InvalidCronExpression as err:
                    self.add(child(base, "schedule"), f"schedule {job['schedule']!r}: {err.reason}")
            run_as = job.get("runAs")
            expr = self.check_auth(run_as, child(base, "runAs"), "runAs")
            if expr is not None and expr.kind != "role":
                self.add(
                    child(base, "runAs"),
                    f"runAs {run_as!r} must name roles, e.g. 'role:case_writer': a job acts as a member "
                    "holding those roles",
                )


def _items(value: Any) -> list[tuple[str, Any]]:
    return list(value.items()) if isinstance(value, dict) else []
