"""Deploy, roll back and undeploy apps: atomic, versioned, and refused with every problem listed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connections, router, transaction
from django.db.models import JSONField, Max
from django.utils import timezone

from apps_runtime.bundles import pack_files
from apps_runtime.dispatch import warm_key
from apps_runtime.egress.secrets import names_set
from apps_runtime.manifest import Bundle, DeployRejected, Problem, defaults
from apps_runtime.manifest.handlers import check_bundle
from apps_runtime.manifest.problems import pointer
from apps_runtime.manifest.schema import UI_VISIBILITY
from apps_runtime.models import App, AppVersion, Job, Tool
from apps_runtime.sandbox import get_sandbox
from apps_runtime.screens import screen_uri
from apps_runtime.wire_names import BUILTIN_TOOLS, builtin_wire_name, tenant_wire_name
from tenants.actions import bump_state_version, record_audit
from tenants.models import Tenant


@dataclass(frozen=True)
class DeployResult:
    app: App
    version: AppVersion
    tools: list[tuple[str, str]]  # (tool name, wire name) in manifest order
    warnings: list[Problem]


@dataclass(frozen=True)
class Validation:
    """The deploy's verdict on a bundle that would deploy: its tools' wire names and its warnings."""

    tools: list[tuple[str, str]]  # (tool name, wire name) in manifest order
    warnings: list[Problem]


def builtin_wire_names(tenant: Tenant) -> dict[str, str]:
    """Wire name -> built-in tool, for this tenant."""
    limit = settings.MCP_WIRE_NAME_LIMIT
    return {builtin_wire_name(tenant.mcp_prefix, b, limit=limit): b for b in BUILTIN_TOOLS}


def active_manifests(tenant: Tenant, *, exclude: str | None = None) -> list[tuple[str, dict]]:
    """(app name, manifest) of every deployed app of the tenant, by app name: one query."""
    apps = App.objects.for_tenant(tenant).filter(active_version__isnull=False)
    if exclude is not None:
        apps = apps.exclude(name=exclude)
    return list(apps.order_by("name").values_list("name", "active_version__manifest"))


def _planned_tools(tenant: Tenant, manifest: dict) -> list[tuple[int, dict, str]]:
    tools = (manifest.get("mcp") or {}).get("tools") or []
    return [(i, t, tenant_wire_name(tenant, manifest["name"], t["name"])) for i, t in enumerate(tools)]


def _name_problems(tenant: Tenant, app_name: str, planned: list[tuple[int, dict, str]]) -> list[Problem]:
    """Every wire name of the deploy that is already held, with its holder named."""
    builtins = builtin_wire_names(tenant)
    held = {
        row["wire_name"]: f"tool '{row['name']}' of app '{row['app__name']}'"
        for row in Tool.objects.for_tenant(tenant)
        .filter(wire_name__in=[w for _, _, w in planned])
        .exclude(app__name=app_name)
        .values("wire_name", "name", "app__name")
    }
    problems, seen = [], {}
    for index, tool, wire in planned:
        at = pointer("mcp", "tools", index, "name")
        holder = None
        if wire in builtins:
            holder = f"built-in tool '{builtins[wire]}'"
        elif wire in held:
            holder = held[wire]
        elif wire in seen:
            holder = f"tool '{seen[wire]}' of this app"
        if holder:
            problems.append(Problem(at, f"wire name '{wire}' is already taken by {holder}; rename the tool"))
        seen.setdefault(wire, tool["name"])
    return problems


def prompt_wire_names(tenant: Tenant, app_name: str, manifest: dict) -> list[tuple[int, str]]:
    """(index in ``mcp.prompts``, wire name) of each prompt of a manifest: the tools' wire-name rule."""
    prompts = (manifest.get("mcp") or {}).get("prompts") or []
    return [(i, tenant_wire_name(tenant, app_name, p["name"])) for i, p in enumerate(prompts)]


def _prompt_name_problems(tenant: Tenant, manifest: dict) -> list[Problem]:
    """Every prompt wire name of the deploy that another app's prompt (or one of this app) holds.

    Prompts have no table of their own: the other apps' active manifests are read (one query).
    """
    app_name = manifest["name"]
    planned = prompt_wire_names(tenant, app_name, manifest)
    if not planned:
        return []
    held = {}
    for other, other_manifest in active_manifests(tenant, exclude=app_name):
        for index, wire in prompt_wire_names(tenant, other, other_manifest):
            held.setdefault(
                wire, f"prompt '{other_manifest['mcp']['prompts'][index]['name']}' of app '{other}'"
            )
    problems, seen = [], {}
    for index, wire in planned:
        name = manifest["mcp"]["prompts"][index]["name"]
        holder = held.get(wire) or (f"prompt '{seen[wire]}' of this app" if wire in seen else None)
        if holder:
            at = pointer("mcp", "prompts", index, "name")
            problems.append(
                Problem(at, f"prompt wire name '{wire}' is already taken by {holder}; rename the prompt")
            )
        seen.setdefault(wire, name)
    return problems


def _tool_descriptor(manifest: dict, tool: dict) -> dict:
    route_spec = manifest["routes"][tool["route"]]
    return {
        "title": tool.get("title"),
        "description": tool["description"],
        "inputSchema": tool["inputSchema"],
        "outputSchema": tool.get("outputSchema"),
        "annotations": tool.get("annotations") or {},
        "maxOutputTokens": tool.get("maxOutputTokens"),
        "task": tool.get("task"),
        "confirm": tool.get("confirm") is True,
        "approvers": tool.get("approvers"),
        "approvalTtl": tool.get("approvalTtl"),
        "route": tool["route"],
        "routeAuth": route_spec["auth"],
        "access": defaults.app_access(manifest),
        "rateLimit": tool.get("rateLimit"),
        # For search_tools (mcp_gateway.tools.search.search_index): kept with the tool so no search
        # reads manifests.
        "keywords": tool.get("keywords") or [],
        "pinned": tool.get("pinned") is True,
        "appTitle": manifest.get("title") or "",
        "appDescription": manifest.get("description") or "",
        "ui": _tool_ui(manifest, tool),
    }


def _tool_ui(manifest: dict, tool: dict) -> dict | None:
    """The screen a tool shows (MCP Apps), as the gateway lists it; None for a tool without one."""
    ui = tool.get("ui")
    if not ui:
        return None
    return {
        "resourceUri": screen_uri(manifest["name"], ui["screen"]),
        "visibility": list(ui.get("visibility") or UI_VISIBILITY),
        "requiresUiHost": ui.get("requiresUiHost") is True,
    }


def _activate(app: App, version: AppVersion, manifest: dict, planned: list[tuple[int, dict, str]]) -> None:
    """Point the app at ``version`` and replace its tool and job rows (inside the caller's transaction)."""
    _drain_on_commit(app)
    now = timezone.now()
    Tool.objects.for_tenant(app.tenant_id).filter(app=app).delete()
    Job.objects.for_tenant(app.tenant_id).filter(app=app).delete()
    Job.objects.bulk_create(
        Job(
            tenant_id=app.tenant_id,
            app=app,
            version=version,
            name=name,
            route_key=spec["route"],
            schedule=spec["schedule"],
            run_as=spec["runAs"],
            active_since=now,
        )
        for name, spec in (manifest.get("jobs") or {}).items()
    )
    _insert_tools(
        {
            "tenant": app.tenant_id,
            "app": app.pk,
            "version": version.pk,
            "name": tool["name"],
            "wire_name": wire,
            "position": index,
            "route_key": tool["route"],
            "descriptor": _tool_descriptor(manifest, tool),
        }
        for index, tool, wire in planned
    )
    app.active_version = version
    app.updated_at = now
    app.save(update_fields=["active_version", "updated_at"])


def _drain_on_commit(app: App) -> None:
    """Once the switch is committed, retire this process's warm workers of every version of ``app``.
    Other processes never give an old version's worker a call of the new one (workers are keyed by version)
    and retire it when they next load the app or sweep for superseded versions (``apps_runtime.superseded``).
    """
    prefix = warm_key(app.tenant_id, app.pk)
    transaction.on_commit(lambda: get_sandbox().drain_workers(prefix))


def _insert_tools(rows: Iterable[dict[str, Any]]) -> None:
    """INSERT Tool rows given as {field name: value}, with every field of the model but its id.

    ``bulk_create`` prepares each field of each row through the model layer: three times the cost of
    the INSERT itself for a 1,000-tool deploy. These rows need no preparation but their JSON, done
    here the way the field does it. Table and column names come from the model, every value is a
    parameter, and errors are Django's (a taken wire name is an IntegrityError).
    """
    fields = [field for field in Tool._meta.concrete_fields if not field.primary_key]
    connection = connections[router.db_for_write(Tool)]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    sql = f"INSERT INTO {quote(Tool._meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    values = [
        tuple(
            connection.ops.adapt_json_value(row[field.name], field.encoder)
            if isinstance(field, JSONField)
            else row[field.name]
            for field in fields
        )
        for row in rows
    ]
    if values:
        with connection.cursor() as cursor:
            cursor.executemany(sql, values)


def _locked_app(tenant: Tenant, name: str) -> App:
    app, _ = App.objects.for_tenant(tenant).get_or_create(tenant=tenant, name=name)
    return App.objects.for_tenant(tenant).select_for_update().get(pk=app.pk)


def _commit_or_reject(tenant: Tenant, app_name: str, planned, work) -> object:
    """Run ``work`` atomically; a lost race for a wire name becomes the same refusal as a plain clash."""
    try:
        with transaction.atomic():
            result = work()
            bump_state_version(tenant)
            return result
    except IntegrityError as err:
        problems = _name_problems(tenant, app_name, planned)
        if not problems:
            raise
        raise DeployRejected(problems) from err


def _unset_secret_warnings(tenant: Tenant, manifest: dict) -> list[Problem]:
    """A warning for each declared secret the tenant has not set: calls that use it are refused."""
    declared = manifest.get("secrets") or []
    unset = set(declared) - names_set(tenant.pk)
    return [
        Problem(
            pointer("secrets", index),
            f"secret {name} is not set: requests that use it are refused until a tenant admin sets it "
            f"(PUT /api/tenants/{tenant.slug}/secrets/{name})",
        )
        for index, name in enumerate(declared)
        if name in unset
    ]


def _checked(tenant: Tenant, bundle: Bundle) -> tuple[list[tuple[int, dict, str]], list[Problem]]:
    """The one validation of a deploy: the manifest, the handlers' code (compiled, never run) and the
    wire names against the tenant's other apps; returns the planned tools and the warnings.

    Raises:
        DeployRejected: every problem, with every warning found on the way.
    """
    warnings = check_bundle(bundle)
    manifest = bundle.manifest
    warnings = [*warnings, *_unset_secret_warnings(tenant, manifest)]
    planned = _planned_tools(tenant, manifest)
    problems = _name_problems(tenant, manifest["name"], planned) + _prompt_name_problems(tenant, manifest)
    if problems:
        raise DeployRejected(problems, warnings=warnings)
    return planned, warnings


def validate_bundle(tenant: Tenant, bundle: Bundle) -> Validation:
    """What ``deploy_bundle`` would say of ``bundle``, without deploying anything.

    Raises:
        DeployRejected: every problem of the bundle (and its warnings), as a deploy would refuse it.
    """
    planned, warnings = _checked(tenant, bundle)
    return Validation([(t["name"], w) for _, t, w in planned], warnings)


def deploy_bundle(tenant: Tenant, bundle: Bundle, *, acting_user: AbstractBaseUser | None) -> DeployResult:
    """Validate and deploy a bundle as a new version of its app, switching to it at once (audited).

    Raises:
        DeployRejected: every problem of the manifest, or a wire name taken by another holder.
    """
    planned, warnings = _checked(tenant, bundle)
    manifest = bundle.manifest
    archive, digest = pack_files(bundle.files)

    def work() -> DeployResult:
        app = _locked_app(tenant, manifest["name"])
        previous = app.active_version.number if app.active_version_id else None
        number = (
            AppVersion.objects.for_tenant(tenant).filter(app=app).aggregate(n=Max("number"))["n"] or 0
        ) + 1
        version = AppVersion.objects.create(
            tenant=tenant,
            app=app,
            number=number,
            manifest=manifest,
            bundle=archive,
            content_hash=digest,
            warnings=[str(w) for w in warnings],
            created_by=acting_user,
        )
        _activate(app, version, manifest, planned)
        record_audit(
            tenant,
            "app.deploy",
            app.name,
            acting_user=acting_user,
            old={"version": previous},
            new={"version": number, "contentHash": digest},
        )
        return DeployResult(app, version, [(t["name"], w) for _, t, w in planned], warnings)

    return _commit_or_reject(tenant, manifest["name"], planned, work)


def rollback_app(tenant: Tenant, app_name: str, *, acting_user: AbstractBaseUser | None) -> DeployResult:
    """Switch an app back to the version before its active one (audited).

    Raises:
        DeployRejected: no such app, no earlier version, or its wire names are now taken.
    """
    app = App.objects.for_tenant(tenant).select_related("active_version").filter(name=app_name).first()
    if app is None or app.active_version is None:
        raise DeployRejected([Problem("/name", f"no deployed app '{app_name}' to roll back")])
    previous = (
        AppVersion.objects.for_tenant(tenant)
        .filter(app=app, number__lt=app.active_version.number)
        .order_by("-number")
        .first()
    )
    if previous is None:
        raise DeployRejected(
            [Problem("/name", f"app '{app_name}' has no version before v{app.active_version.number}")]
        )
    planned = _planned_tools(tenant, previous.manifest)
    problems = _name_problems(tenant, app_name, planned) + _prompt_name_problems(tenant, previous.manifest)
    if problems:
        raise DeployRejected(problems)

    def work() -> DeployResult:
        locked = _locked_app(tenant, app_name)
        old = {"version": locked.active_version.number if locked.active_version_id else None}
        _activate(locked, previous, previous.manifest, planned)
        new = {"version": previous.number}
        record_audit(tenant, "app.rollback", app_name, acting_user=acting_user, old=old, new=new)
        return DeployResult(locked, previous, [(t["name"], w) for _, t, w in planned], [])

    return _commit_or_reject(tenant, app_name, planned, work)


def undeploy_app(tenant: Tenant, app_name: str, *, acting_user: AbstractBaseUser | None) -> App:
    """Stop serving an app: its routes, tools and job schedules go away; versions and records are kept
    (audited).

    Raises:
        DeployRejected: no such deployed app.
    """
    with transaction.atomic():
        app = App.objects.for_tenant(tenant).select_for_update().filter(name=app_name).first()
        if app is None or app.active_version_id is None:
            raise DeployRejected([Problem("/name", f"no deployed app '{app_name}'")])
        Tool.objects.for_tenant(tenant).filter(app=app).delete()
        Job.objects.for_tenant(tenant).filter(app=app).delete()
        _drain_on_commit(app)
        old = {"version": app.active_version.number}
        app.active_version = None
        app.updated_at = timezone.now()
        app.save(update_fields=["active_version", "updated_at"])
        record_audit(tenant, "app.undeploy", app_name, acting_user=acting_user, old=old, new=None)
        bump_state_version(tenant)
    return app
