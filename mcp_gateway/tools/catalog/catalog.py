"""The per-caller tool catalog: built once per tenant change, filtered per caller, in a fixed order.

A tenant's catalog (descriptors as SDK ``Tool`` objects, compiled argument validators, the auth
rules of each tool's app and route) is cached per process under the tenant's ``state_version``.
Every deploy, setting or membership change bumps that version in the database, so any process
sees the change on its next request without a restart.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import mcp.types as types

from apps_runtime.auth_expr import AuthExpr, parse_auth
from apps_runtime.deploy import builtin_wire_names
from apps_runtime.dispatch import may_use_route
from apps_runtime.json_schemas import SchemaValidator, compile_schema
from apps_runtime.models import Tool
from core.caches import BoundedCache
from mcp_gateway.tools.catalog.builtins import BUILTINS, RUN_CODE, SEARCH_TOOLS
from mcp_gateway.tools.catalog.output_budget import OutputBudget, output_budget
from tenants.callers import Caller
from tenants.models import Tenant
from tenants.rate_limit_rule import RateLimit

if TYPE_CHECKING:
    from mcp_gateway.tools.search.search_index import SearchIndex

T = TypeVar("T")


class Visible(Protocol):
    """A catalog entry of any kind (tool, resource, prompt): it says who may see it."""

    def visible_to(self, caller: Caller) -> bool: ...


E = TypeVar("E", bound=Visible)
# The toolDiscovery value that lists only built-ins and pinned tools.
SEARCH_MODE = "search"
# The toolDiscovery value for code mode: the same short list (run_code among the built-ins).
CODE_MODE = "code"
NOT_SEARCHED = (SEARCH_TOOLS, RUN_CODE)


@dataclass(frozen=True)
class CatalogEntry:
    wire_name: str
    tool: types.Tool
    read_only: bool
    builtin: str | None = None  # the built-in's name, or None for an app tool
    app_name: str | None = None
    route_key: str | None = None
    access: AuthExpr | None = None
    route_auth: AuthExpr | None = None
    max_output_tokens: int | None = None  # the manifest's maxOutputTokens; None: the tenant's default
    rate_limit: RateLimit | None = None  # the tool's own; None: the tenant's toolRateLimit, if any
    task_support: str | None = None  # "optional" or "required" (the manifest's "task"), else None
    confirm: bool = False  # ask the user before the route runs (manifest option "confirm")
    approvers: str | None = None  # who may approve a call asked out of band (manifest "approvers")
    approval_ttl: int | None = None  # seconds (manifest "approvalTtl"); None: APPROVAL_TTL_SECONDS
    # For search_tools and toolDiscovery (manifest options "keywords", "pinned"; the app's title).
    tool_name: str | None = None
    keywords: tuple[str, ...] = ()
    pinned: bool = False
    app_title: str = ""
    app_description: str = ""
    ui: dict | None = None  # the screen it shows (resourceUri, visibility, requiresUiHost), if any

    # Compiled on first call, not when the catalog is built: a tenant of thousands of tools lists
    # them all, but calls few.
    @functools.cached_property
    def validator(self) -> SchemaValidator:
        return compile_schema(self.tool.input_schema)

    @functools.cached_property
    def output_validator(self) -> SchemaValidator | None:
        return compile_schema(self.tool.output_schema) if self.tool.output_schema else None

    def output_budget(self, tenant: Tenant) -> OutputBudget:
        return output_budget(tenant, self.max_output_tokens, self.tool.input_schema)

    @property
    def app_only(self) -> bool:
        """Hidden from the model: only a view (through a client that shows MCP Apps) calls it."""
        return self.ui is not None and "model" not in self.ui["visibility"]

    def listed_for(self, ui_host: bool) -> bool:
        """Whether ``tools/list`` offers it to a client that shows MCP Apps views (``ui_host``) or not."""
        if self.ui is None:
            return True
        return not self.app_only and (ui_host or not self.ui["requiresUiHost"])

    def visible_to(self, caller: Caller) -> bool:
        # run_code is offered to a read-only token: its inner writes are refused one by one.
        if caller.read_only and not self.read_only and self.builtin != RUN_CODE:
            return False
        if not caller.carries(self.app_name, self.read_only):
            return False
        if self.builtin is not None:
            return caller.is_member or caller.is_superuser
        if self.access is None or self.route_auth is None:
            return False  # an app tool always has both rules (``_app_entry``): without them, nobody
        return may_use_route(self.access, self.route_auth, caller)

    @property
    def route_address(self) -> tuple[str, str]:
        """An app tool's app name and route key.

        Raises:
            ValueError: a built-in tool, which has no app route.
        """
        if self.app_name is None or self.route_key is None:
            raise ValueError(f"{self.wire_name} is a built-in tool: it has no app route")
        return self.app_name, self.route_key


def needed_scope(entry: CatalogEntry, caller: Caller) -> str | None:
    """The scope ``caller``'s connection lacks for ``entry``: a tool the member may use (their roles,
    the token's read-only) that the connection's apps do not carry; None otherwise (visible, or not
    the member's at all). The step-up's one rule (``tools.calls.resolve_tool``, the transport's 403)."""
    if caller.apps is None or entry.app_name is None or entry.visible_to(caller):
        return None
    if not entry.visible_to(caller.widened()):
        return None
    return caller.scope_for(entry.app_name, entry.read_only)


@dataclass
class TenantCatalog:
    """Every tool of one tenant at one state version."""

    tenant_id: int
    state_version: int
    state_key: tuple
    entries: list[CatalogEntry]
    by_name: dict[str, CatalogEntry] = field(init=False)
    _views: BoundedCache[tuple, list[CatalogEntry]] = field(
        default_factory=lambda: BoundedCache(256), init=False, repr=False
    )
    # tools/list pages already shaped for the wire, by (view, cursor, protocol version, page size):
    # they go with the catalog when the tenant's state moves on. Filled by the MCP server only.
    pages: dict[tuple, dict] = field(default_factory=dict, init=False, repr=False)
    # Other catalogs of the same tenant state (resources, prompts: ``derived``), built on first use.
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {entry.wire_name: entry for entry in self.entries}

    @property
    def search_index(self) -> SearchIndex:
        """The tenant's tools indexed for search_tools: built on the first search of this state.

        It goes with the catalog, so a deploy, a rollback or a role change (each moves the tenant's
        state) is searched at once in every process, and a deploy itself pays nothing for it.
        """
        # Imported here: numpy, bm25s and WordLlama (~30 MiB) load in a process only once it searches.
        from mcp_gateway.tools.search.search_index import SearchIndex

        # Neither search_tools nor run_code is a tool a search should lead to (both are listed).
        return self.derived(
            "search_index", lambda: SearchIndex([e for e in self.entries if e.builtin not in NOT_SEARCHED])
        )

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """The catalog ``key`` of this tenant state (resources, prompts), built by ``build`` once.

        It goes with this catalog when the tenant's state moves on, so it is never stale, and a
        tenant that only uses tools never pays for building it.
        """
        found = self._derived.get(key)
        if found is None:
            found = self._derived.setdefault(key, build())
        return found

    def visible(self, caller: Caller, *, app_tools: bool, ui_host: bool = False) -> list[CatalogEntry]:
        """The tools ``caller`` may see, built-ins first, then app tools by app and manifest order;
        for a client that shows MCP Apps views (``ui_host``) or not."""
        key = view_key(caller, app_tools=app_tools, ui_host=ui_host)
        found = self._views.get(key)
        if found is None:
            found = [
                e
                for e in self.entries
                if (app_tools or e.builtin) and e.visible_to(caller) and e.listed_for(ui_host)
            ]
            self._views.put(key, found)
        return found


def visible_tools(tenant: Tenant, caller: Caller, *, ui_host: bool = False) -> list[CatalogEntry]:
    """Every tool ``caller`` may see and call now: the one per-caller rule of tools/list and search_tools
    (``ui_host``: for a client that shows MCP Apps views); ``run_code`` only while ``codeMode`` is on."""
    visible = catalog_for(tenant).visible(
        caller, app_tools=tenant.switch("customAppsMcpTools"), ui_host=ui_host
    )
    return visible if tenant.setting("codeMode") else [e for e in visible if e.builtin != RUN_CODE]


def listed_tools(tenant: Tenant, caller: Caller, *, ui_host: bool = False) -> list[CatalogEntry]:
    """What tools/list offers ``caller``: all of ``visible_tools``, or in the tenant's ``search`` mode of
    ``toolDiscovery`` only the built-ins and the tools an app pins (the others stay callable by name)."""
    visible = visible_tools(tenant, caller, ui_host=ui_host)
    if tenant.setting("toolDiscovery") not in (SEARCH_MODE, CODE_MODE):
        return visible
    return [e for e in visible if e.builtin is not None or e.pinned]


def caller_view(views: BoundedCache[tuple, list[E]], entries: Iterable[E], caller: Caller) -> list[E]:
    """The ``entries`` ``caller`` may see (each one's ``visible_to``), kept per view in ``views``: role
    combinations are few. Resources and prompts keep their views with this one rule."""
    key = view_key(caller, app_tools=True)
    found = views.get(key)
    if found is None:
        found = views.put(key, [e for e in entries if e.visible_to(caller)])
    return found


def view_key(caller: Caller, *, app_tools: bool, ui_host: bool = False) -> tuple:
    """Everything the tools a caller sees depend on, besides the catalog; role combinations are few."""
    narrowed = (caller.apps, caller.read_apps)  # a connection narrowed to some apps sees only those
    return (
        caller.is_member,
        caller.is_superuser,
        caller.read_only,
        caller.roles,
        narrowed,
        app_tools,
        ui_host,
    )


def _annotations(raw: dict) -> types.ToolAnnotations | None:
    if not raw:
        return None
    return types.ToolAnnotations(
        title=raw.get("title"),
        read_only_hint=raw.get("readOnlyHint"),
        destructive_hint=raw.get("destructiveHint"),
        idempotent_hint=raw.get("idempotentHint"),
        open_world_hint=raw.get("openWorldHint"),
    )


def _app_entry(row: Tool) -> CatalogEntry:
    d = row.descriptor
    output = d.get("outputSchema")
    annotations = d.get("annotations") or {}
    return CatalogEntry(
        wire_name=row.wire_name,
        tool=types.Tool(
            name=row.wire_name,
            title=d.get("title"),
            description=d["description"],
            input_schema=d["inputSchema"],
            output_schema=output,
            annotations=_annotations(annotations),
            execution=types.ToolExecution(task_support=d["task"]) if d.get("task") else None,
            _meta=_ui_meta(d.get("ui")),
        ),
        read_only=annotations.get("readOnlyHint") is True,
        task_support=d.get("task"),
        app_name=row.app.name,
        route_key=row.route_key,
        access=parse_auth(d["access"]),
        route_auth=parse_auth(d["routeAuth"]),
        max_output_tokens=d.get("maxOutputTokens"),
        rate_limit=RateLimit.from_json(d["rateLimit"]) if d.get("rateLimit") else None,
        confirm=d.get("confirm") is True,
        approvers=d.get("approvers"),
        approval_ttl=d.get("approvalTtl"),
        tool_name=row.name,
        keywords=tuple(d.get("keywords") or ()),
        pinned=d.get("pinned") is True,
        app_title=d.get("appTitle") or "",
        app_description=d.get("appDescription") or "",
        ui=d.get("ui"),
    )


def _ui_meta(ui: dict | None) -> dict | None:
    """A tool's ``_meta`` for MCP Apps hosts: its view, and who may call it. The flat
    ``ui/resourceUri`` key is the extension's earlier form, which some hosts still read."""
    if ui is None:
        return None
    return {
        "ui": {"resourceUri": ui["resourceUri"], "visibility": ui["visibility"]},
        "ui/resourceUri": ui["resourceUri"],
    }


def _builtin_entries(tenant: Tenant) -> list[CatalogEntry]:
    names = {builtin: wire for wire, builtin in builtin_wire_names(tenant).items()}
    entries = []
    for spec in BUILTINS.values():
        wire = names[spec.name]
        entries.append(
            CatalogEntry(
                wire_name=wire,
                tool=types.Tool(
                    name=wire,
                    title=spec.title,
                    description=spec.description,
                    input_schema=spec.input_schema,
                    output_schema=spec.output_schema,
                    annotations=_annotations(spec.annotations),
                ),
                read_only=spec.read_only,
                builtin=spec.name,
            )
        )
    return entries


def build_catalog(tenant: Tenant) -> TenantCatalog:
    """Compile the tenant's catalog: built-ins, then app tools (one query)."""
    rows = Tool.objects.for_tenant(tenant).select_related("app").order_by("app__name", "position")
    entries = _builtin_entries(tenant) + [_app_entry(row) for row in rows]
    return TenantCatalog(
        tenant_id=tenant.pk, state_version=tenant.state_version, state_key=tenant.state_key, entries=entries
    )


_lock = threading.Lock()
# The tenants this process served lately: one catalog each (all their tools), so a bound.
_catalogs: BoundedCache[int, TenantCatalog] = BoundedCache(1024)


def catalog_for(tenant: Tenant) -> TenantCatalog:
    """The tenant's catalog at its current ``state_version`` (rebuilt when the version moved).

    ``tenant`` must be freshly loaded for this request, so its version is current.
    """
    cached = cached_catalog(tenant)
    if cached is not None:
        return cached
    built = build_catalog(tenant)
    with _lock:
        current = _catalogs.get(tenant.pk)
        if _should_replace(current, built):
            _catalogs.put(tenant.pk, built)
    return built


def _should_replace(current: TenantCatalog | None, built: TenantCatalog) -> bool:
    """A newer version of the same tenant stays; a catalog of an earlier tenant that had this
    primary key (a rolled-back test, a restored backup) never does."""
    if current is None or current.state_key[:-1] != built.state_key[:-1]:
        return True
    return current.state_version <= built.state_version


def cached_catalog(tenant: Tenant) -> TenantCatalog | None:
    """The tenant's catalog if this process holds it at the tenant's current version; never queries."""
    cached = _catalogs.get(tenant.pk)
    return cached if cached is not None and cached.state_key == tenant.state_key else None
