"""App resources for one caller: which ones the caller may list, and reading a URI as the caller.

The seam. Everything the protocol layer asks goes through three functions here:
``visible_resources(tenant, caller)`` ("the resources this caller may list", static ones and
templates, in a fixed order), ``read_resource(call, uri)`` ("read this URI as this
caller": match, check, run, audit) and ``resource_entry(tenant, caller, uri)``. The entries come
from *resource kinds*: ``RESOURCE_KINDS`` maps a kind to a function that turns one deployed app
(name, manifest) into ``ResourceEntry`` objects, each carrying its own ``visible_to`` rule and its
``reader``. The kinds here are bundle files, GET routes and collection records; another kind (MCP
Apps screens, ``ui://``) plugs in by adding its function to ``RESOURCE_KINDS`` -- the listing, the
matching, the switch, the audit and the errors stay in this one place.

The per-tenant list is derived from the tool catalog's tenant state (``TenantCatalog.derived``), so
a deploy, a setting or a role change is seen on the next request, as for tools.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import mcp.types as types

from apps_runtime.auth_expr import AuthExpr, parse_auth
from apps_runtime.bundles import bundle_dir
from apps_runtime.deploy import active_manifests
from apps_runtime.dispatch import LoadedApp, RouteCall, load_app, may_use_route, run_route
from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.manifest import defaults
from apps_runtime.manifest.resources import mime_type, resource_path
from apps_runtime.records import RecordsScope, change_marker, get_record
from apps_runtime.resource_uris import UriPattern, app_of
from apps_runtime.routes import compile_route
from apps_runtime.screens import SCREEN_MIME_TYPE, SDK_PATH, UI_SCHEME, ui_csp, ui_meta
from apps_runtime.screens import render as render_screen
from apps_runtime.wire_names import tenant_wire_name
from core.caches import BoundedCache
from core.error_ids import error_id_note
from mcp_gateway.audit_log import AuditRecord
from mcp_gateway.exceptions import ResourceNotFound, RouteFailed, RouteRefused
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.catalog.catalog import caller_view, catalog_for
from mcp_gateway.tools.catalog.cursors import LIST_TTL_MS, page_of
from mcp_gateway.tools.pipeline.asks import AskRefused, HandlerAsked, checked_questions
from mcp_gateway.tools.pipeline.audit import audited_call
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import handler_message
from tenants.callers import Caller
from tenants.models import Tenant

Outcome = ToolCallAudit.Outcome
Contents = types.TextResourceContents | types.BlobResourceContents
L = TypeVar("L", types.Resource, types.ResourceTemplate)
APP_RESOURCES_OFF = "App resources and prompts are switched off for this tenant (setting customAppsMcpTools)."
# MIME types served as text (when the bytes are UTF-8) besides text/*.
_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/javascript")


@dataclass(frozen=True)
class ReadRequest:
    """One read: the call's context, which URI, the template's values, and the audit row being filled."""

    call: CallContext
    uri: str
    values: dict[str, str]
    audit: AuditRecord

    @property
    def tenant(self) -> Tenant:
        return self.call.tenant

    @property
    def caller(self) -> Caller:
        return self.call.caller


Reader = Callable[["ResourceEntry", ReadRequest], list[Contents]]


@dataclass(frozen=True)
class ResourceEntry:
    """One resource, or one resource template, of one app."""

    kind: str
    app_name: str
    name: str  # the manifest's name
    wire_name: str
    pattern: UriPattern
    title: str | None
    description: str
    mime_type: str
    access: AuthExpr  # the app's access
    auth: AuthExpr  # the file's auth, the route's auth, or the collection's read rule
    reader: Reader
    spec: dict = field(repr=False)
    size: int | None = None
    meta: dict | None = None  # the listing's _meta (a screen's ``ui``), if any

    def visible_to(self, caller: Caller) -> bool:
        """The route rule: public, else the app's access and the resource's own rule. Resources are
        read-only (GET routes, reads of records and files), so read-only tokens see them too, and a
        connection that carries the app read-only."""
        return caller.carries(self.app_name, True) and may_use_route(self.access, self.auth, caller)

    @property
    def is_template(self) -> bool:
        return self.pattern.is_template

    # Built once per catalog: a listing hands out the same objects, as tools/list does.
    @functools.cached_property
    def listed(self) -> types.Resource | types.ResourceTemplate:
        if self.is_template:
            return types.ResourceTemplate(
                uri_template=self.pattern.uri,
                name=self.wire_name,
                title=self.title,
                description=self.description,
                mime_type=self.mime_type,
                _meta=self.meta,
            )
        return types.Resource(
            uri=self.pattern.uri,
            name=self.wire_name,
            title=self.title,
            description=self.description,
            mime_type=self.mime_type,
            size=self.size,
            _meta=self.meta,
        )


@dataclass
class ResourceCatalog:
    """Every resource of one tenant state: static ones by URI, templates in order."""

    entries: list[ResourceEntry]
    by_uri: dict[str, ResourceEntry] = field(init=False)
    by_app: dict[str, list[ResourceEntry]] = field(init=False)
    _views: BoundedCache[tuple, list[ResourceEntry]] = field(
        default_factory=lambda: BoundedCache(256), init=False, repr=False
    )

    def visible(self, caller: Caller) -> list[ResourceEntry]:
        """The entries ``caller`` may list, kept per view (role combinations are few)."""
        return caller_view(self._views, self.entries, caller)

    def __post_init__(self) -> None:
        self.by_uri = {e.pattern.uri: e for e in self.entries if not e.is_template}
        self.by_app = {}
        for entry in self.entries:
            self.by_app.setdefault(entry.app_name, []).append(entry)

    def owner(self, uri: str) -> str | None:
        """The app serving ``uri`` (a resource or an expansion of a template), if any."""
        found = self.match(uri)
        return found[0].app_name if found is not None else None

    def match(self, uri: str) -> tuple[ResourceEntry, dict[str, str]] | None:
        """The entry serving ``uri`` and its values; a static URI wins over a template."""
        found = self.by_uri.get(uri) or self.by_uri.get(_lower_scheme(uri))
        if found is not None:
            return found, {}
        for entry in self.by_app.get(app_of(uri) or "", ()):
            if entry.is_template and (values := entry.pattern.match(uri)) is not None:
                return entry, values
        return None


def _lower_scheme(uri: str) -> str:
    found, sep, rest = uri.partition("://")
    return f"{found.lower()}{sep}{rest}"


def _text_or_blob(uri: str, mime: str, data: bytes) -> Contents:
    if mime.startswith("text/") or mime.split(";")[0] in _TEXT_TYPES or mime.endswith("+json"):
        try:
            return types.TextResourceContents(uri=uri, mime_type=mime, text=data.decode("utf-8"))
        except UnicodeDecodeError:
            pass  # served as bytes, as they are
    return types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))


def _loaded(req: ReadRequest, entry: ResourceEntry) -> LoadedApp:
    loaded = load_app(req.tenant, entry.app_name)
    req.audit.ran(loaded.app.name, loaded.version.number)
    return loaded


def _read_file(entry: ResourceEntry, req: ReadRequest) -> list[Contents]:
    loaded = _loaded(req, entry)
    data = (bundle_dir(loaded.version) / entry.spec["file"]).read_bytes()
    req.audit.ended(Outcome.OK)
    return [_text_or_blob(req.uri, entry.mime_type, data)]


def run_read_route(
    req: ReadRequest,
    app_name: str,
    route_key: str,
    *,
    query: dict | None = None,
    params: dict | None = None,
    is_resource: bool = True,
    answers: dict[str, dict] | None = None,
    can_ask: tuple[str, ...] | None = None,
) -> Any:
    """Run a GET route of the app as the caller, the way the front-end would, and return its body.

    Raises:
        ResourceNotFound: for a resource (``is_resource``), the route answered 401, 403 or 404, or
            the caller may not run it.
        RouteAnswerRefused: another error answer (its message), or a handler failure (its error id);
            for a prompt or a completion, also a 404 (a route says what it did not find).
    """
    try:
        loaded = load_app(req.tenant, app_name)
        req.audit.ran(loaded.app.name, loaded.version.number)
        route = loaded.compiled.routes.by_key[route_key]
        result = run_route(
            RouteCall(
                loaded,
                route,
                req.caller,
                query=query or {},
                params=params or {},
                answers=answers,
                can_ask=can_ask,
                traceparent=req.call.traceparent,
            )
        )
    except RuntimeDomainError as err:
        raise ResourceNotFound(req.uri) from err
    if result.asks is not None and not result.failed:
        try:
            asked = checked_questions(result.asks)
        except AskRefused as err:
            req.audit.ended(Outcome.TOOL_ERROR)
            raise RouteFailed(str(err)) from err
        req.audit.ended(Outcome.INPUT_REQUIRED)
        raise HandlerAsked(asked)
    if result.error_id is not None:  # failed
        req.audit.failed(result.error_id)
        raise RouteFailed(f"The app's handler failed {error_id_note(result.error_id)}")
    if result.status in (401, 403) or (result.status == 404 and is_resource):
        raise ResourceNotFound(req.uri)
    if result.status >= 400:
        req.audit.ended(Outcome.TOOL_ERROR)
        raise RouteRefused(handler_message(result.body, result.status))
    req.audit.ended(Outcome.OK)
    return result.body


def _read_route(entry: ResourceEntry, req: ReadRequest) -> list[Contents]:
    body = run_read_route(req, entry.app_name, entry.spec["route"], params=req.values)
    if isinstance(body, str) and not entry.mime_type.endswith("json"):
        return [types.TextResourceContents(uri=req.uri, mime_type=entry.mime_type, text=body)]
    return [
        types.TextResourceContents(
            uri=req.uri, mime_type=entry.mime_type, text=json.dumps(body, ensure_ascii=False)
        )
    ]


def _read_record(entry: ResourceEntry, req: ReadRequest) -> list[Contents]:
    loaded = _loaded(req, entry)
    scope = RecordsScope(
        tenant_id=loaded.app.tenant_id, app_id=loaded.app.pk, compiled=loaded.compiled, caller=req.caller
    )
    (record_id,) = req.values.values()
    try:
        record = get_record(scope, entry.spec["collection"], record_id)
    except RuntimeDomainError as err:  # not found, or not readable: alike
        raise ResourceNotFound(req.uri) from err
    req.audit.ended(Outcome.OK)
    return [
        types.TextResourceContents(
            uri=req.uri, mime_type=entry.mime_type, text=json.dumps(record, ensure_ascii=False)
        )
    ]


def _app_entries(tenant: Tenant, app_name: str, manifest: dict) -> list[ResourceEntry]:
    """The file, route and record resources of one app, in manifest order."""
    access = parse_auth(defaults.app_access(manifest))
    routes = manifest.get("routes") or {}
    collections = manifest.get("collections") or {}
    entries = []
    for spec in (manifest.get("mcp") or {}).get("resources") or []:
        params = None
        if "file" in spec:
            kind, reader, auth = "file", _read_file, parse_auth(spec.get("auth", defaults.DEFAULT_ACCESS))
        elif "route" in spec:
            route = compile_route(spec["route"], routes[spec["route"]])
            kind, reader, auth, params = "route", _read_route, route.auth, route.params
        else:
            kind, reader = "record", _read_record
            auth = parse_auth(defaults.collection_read(collections[spec["collection"]]))
        path = resource_path(spec, params)
        if path is None:  # deploy checked every resource: a deployed manifest's always has a path
            raise ValueError(f"resource {spec.get('name')!r} of app {app_name} has no URI")
        entries.append(
            ResourceEntry(
                kind=kind,
                app_name=app_name,
                name=spec["name"],
                wire_name=tenant_wire_name(tenant, app_name, spec["name"]),
                pattern=UriPattern.compile(app_name, path),
                title=spec.get("title"),
                description=spec["description"],
                mime_type=mime_type(spec),
                access=access,
                auth=auth,
                reader=reader,
                spec=spec,
            )
        )
    return entries


def _read_screen(entry: ResourceEntry, req: ReadRequest) -> list[Contents]:
    """A screen as an MCP Apps view: one HTML document, with the CSP and permissions it declares."""
    loaded = _loaded(req, entry)
    root = bundle_dir(loaded.version)
    origin = req.call.link_origin
    tools = app_tool_names(req.tenant, req.caller, loaded.version.manifest)
    info = {"app": entry.app_name, "tools": tools, "base": None}

    def read(path: str) -> bytes:
        return (root / path).read_bytes()

    rendered = render_screen(entry.spec["file"], read, f"{origin or ''}{SDK_PATH}", info)
    meta = {"ui": ui_meta(entry.spec, ui_csp(entry.spec, origin, rendered.uses_sdk))}
    req.audit.ended(Outcome.OK)
    return [
        types.TextResourceContents(uri=req.uri, mime_type=SCREEN_MIME_TYPE, text=rendered.html, _meta=meta)
    ]


def app_tool_names(tenant: Tenant, caller: Caller, manifest: dict) -> dict[str, str]:
    """The app's tools the caller may call, manifest name -> wire name: what its views call (in an
    MCP Apps host and on the front-end path's host page alike).

    The wire names are the catalog's (stored at deploy), never computed again here: a changed
    wire-name limit would otherwise make the screen miss its tools."""
    app_name, tools = manifest["name"], (manifest.get("mcp") or {}).get("tools") or []
    declared = {tool["name"] for tool in tools}
    by_tool = {
        entry.tool_name: entry
        for entry in catalog_for(tenant).entries
        if entry.app_name == app_name and entry.tool_name in declared
    }
    names = {}
    for tool in tools:
        found = by_tool.get(tool["name"])
        if found is not None and found.visible_to(caller):
            names[tool["name"]] = found.wire_name
    return names


def _screen_entries(tenant: Tenant, app_name: str, manifest: dict) -> list[ResourceEntry]:
    """The app's screens, as ui://<app>/<screen> resources (MCP Apps views), in manifest order."""
    access = parse_auth(defaults.app_access(manifest))
    entries = []
    for name, spec in (manifest.get("screens") or {}).items():
        entries.append(
            ResourceEntry(
                kind="screen",
                app_name=app_name,
                name=name,
                wire_name=tenant_wire_name(tenant, app_name, name),
                pattern=UriPattern.compile(app_name, name, scheme=UI_SCHEME),
                title=spec.get("title"),
                description=spec.get("description")
                or f"The {spec.get('title') or name} screen of {app_name}.",
                mime_type=SCREEN_MIME_TYPE,
                access=access,
                auth=parse_auth(spec.get("auth", defaults.DEFAULT_ACCESS)),
                reader=_read_screen,
                spec=spec,
                meta={"ui": ui_meta(spec, ui_csp(spec, None, uses_sdk=False))},
            )
        )
    return entries


# Kind name -> the entries of one deployed app.
RESOURCE_KINDS: dict[str, Callable[[Tenant, str, dict], list[ResourceEntry]]] = {
    "app": _app_entries,
    "screen": _screen_entries,
}


def build_resources(tenant: Tenant) -> ResourceCatalog:
    """Every resource of the tenant's deployed apps: by app name, then kind, then manifest order."""
    entries: list[ResourceEntry] = []
    for app_name, manifest in active_manifests(tenant):
        for kind in RESOURCE_KINDS.values():
            entries += kind(tenant, app_name, manifest)
    return ResourceCatalog(entries)


def resource_catalog(tenant: Tenant) -> ResourceCatalog:
    return catalog_for(tenant).derived("resources", lambda: build_resources(tenant))


def visible_resources(tenant: Tenant, caller: Caller) -> list[ResourceEntry]:
    """The resources and templates ``caller`` may list, in the catalog's order."""
    if not tenant.setting("customAppsMcpTools"):
        return []
    return resource_catalog(tenant).visible(caller)


def change_markers(tenant: Tenant, uris: set[str]) -> dict[str, tuple]:
    """For each URI a subscriber follows, what changes when its contents may have changed.

    A record's own update time; for a route, the app's records (a handler may read any of them);
    a file changes only with a deploy, which subscribers hear of through the tenant's state. A URI
    that names nothing maps to ``()``. One query per record URI and per app with route URIs.
    """
    catalog = resource_catalog(tenant)
    markers: dict[str, tuple] = {}
    apps: dict[str, tuple] = {}
    for uri in sorted(uris):
        found = catalog.match(uri)
        if found is None or found[0].kind not in ("route", "record"):
            markers[uri] = ()
            continue
        entry, values = found
        if entry.kind == "record":
            (record_id,) = values.values()
            markers[uri] = change_marker(tenant.pk, entry.app_name, entry.spec["collection"], record_id)
        else:
            if entry.app_name not in apps:
                apps[entry.app_name] = change_marker(tenant.pk, entry.app_name)
            markers[uri] = apps[entry.app_name]
    return markers


def _listings(page: Sequence[ResourceEntry], kind: type[L]) -> list[L]:
    """The listings of a page of one kind of entry (the filter keeps all of them: it types them)."""
    return [listed for entry in page if isinstance(listed := entry.listed, kind)]


def list_resources(tenant: Tenant, caller: Caller, cursor: str | None) -> types.ListResourcesResult:
    """One page of the caller's static resources (private to the caller: it depends on its roles).

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    static = [e for e in visible_resources(tenant, caller) if not e.is_template]
    page, next_cursor = page_of(static, "r", cursor)
    return types.ListResourcesResult(
        resources=_listings(page, types.Resource),
        next_cursor=next_cursor,
        ttl_ms=LIST_TTL_MS,
        cache_scope="private",
    )


def list_templates(tenant: Tenant, caller: Caller, cursor: str | None) -> types.ListResourceTemplatesResult:
    """One page of the caller's resource templates.

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    templates = [e for e in visible_resources(tenant, caller) if e.is_template]
    page, next_cursor = page_of(templates, "rt", cursor)
    return types.ListResourceTemplatesResult(
        resource_templates=_listings(page, types.ResourceTemplate),
        next_cursor=next_cursor,
        ttl_ms=LIST_TTL_MS,
        cache_scope="private",
    )


def resource_entry(tenant: Tenant, caller: Caller, uri: str) -> tuple[ResourceEntry, dict[str, str]]:
    """The resource serving ``uri`` for ``caller``, with the template's values.

    Raises:
        ResourceNotFound: no resource has this URI, the caller may not read it, or app resources
            are switched off (the message says so).
    """
    return _readable(tenant, caller, uri, resource_catalog(tenant).match(uri))


def _readable(
    tenant: Tenant, caller: Caller, uri: str, found: tuple[ResourceEntry, dict[str, str]] | None
) -> tuple[ResourceEntry, dict[str, str]]:
    """``resource_entry`` for a URI already matched (``found``)."""
    if found is None or not found[0].visible_to(caller):
        raise ResourceNotFound(uri)
    if not tenant.setting("customAppsMcpTools"):
        raise ResourceNotFound(uri, f"Resource not found: {uri[:300]}. {APP_RESOURCES_OFF}")
    return found


def read_resource(call: CallContext, uri: str) -> types.ReadResourceResult:
    """Read ``uri`` as the call's caller; one audit row (method resources/read), whatever happens.

    Raises:
        ResourceNotFound: see ``resource_entry``; also when the route or the record says not found.
        RouteAnswerRefused: the route answered an error or failed.
        InternalError: the platform failed; logged under the error id.
    """
    found = resource_catalog(call.tenant).match(uri)  # matched once: its name audits, its entry reads
    name = found[0].wire_name if found is not None else uri[:128]
    with audited_call(call, name, {"uri": uri}, method="resources/read") as audit:
        entry, values = _readable(call.tenant, call.caller, uri, found)
        audit.app(entry.app_name)
        contents = entry.reader(entry, ReadRequest(call, uri, values, audit))
        return types.ReadResourceResult(contents=contents, ttl_ms=0, cache_scope="private")
