"""The records built-ins' handlers: records of the tenant's apps, with the caller's permissions.

They are registered, with their descriptors, in ``builtins.BUILTINS``."""

from __future__ import annotations

from apps_runtime import records
from apps_runtime.compiled import compiled_version
from apps_runtime.dispatch import load_app
from apps_runtime.exceptions import AppNotFound
from apps_runtime.models import App
from apps_runtime.records import RecordsScope
from mcp_gateway.tools.catalog.output_budget import output_budget
from tenants.callers import Caller
from tenants.models import Tenant


def _scope(tenant: Tenant, caller: Caller, app_name: str, *, writes: bool = False) -> RecordsScope:
    """Records of an app the caller may open and their connection carries (``writes``: not only
    read-only); any other app is "unknown"."""
    loaded = load_app(tenant, app_name)
    if not caller.carries(app_name, not writes) or not loaded.compiled.access.allows(caller):
        raise AppNotFound(app_name)
    return RecordsScope(tenant.pk, loaded.app.pk, loaded.compiled, caller)


def collections_list(tenant: Tenant, caller: Caller, args: dict) -> dict:
    apps = []
    rows = (
        App.objects.for_tenant(tenant).filter(active_version__isnull=False).select_related("active_version")
    )
    for app in rows.order_by("name"):
        compiled = compiled_version(app.active_version)
        if not caller.carries(app.name, True) or not compiled.access.allows(caller):
            continue
        scope = RecordsScope(tenant.pk, app.pk, compiled, caller)
        collections = [
            {"name": name, "schema": compiled.collections[name].validator.schema}
            for name in records.collection_names(scope)
        ]
        apps.append({"app": app.name, "collections": collections})
    return {"apps": apps}


def records_query(tenant: Tenant, caller: Caller, args: dict) -> dict:
    return records.query_records(
        _scope(tenant, caller, args["app"]),
        args["collection"],
        where=args.get("where"),
        order_by=args.get("order_by"),
        limit=args.get("limit", 50),
        cursor=args.get("cursor"),
        # Stop at the output budget (a built-in tool's is the tenant's): what would be cut is not read.
        max_bytes=output_budget(tenant, None, None).max_bytes,
    )


def records_get(tenant: Tenant, caller: Caller, args: dict) -> dict:
    return records.get_record(_scope(tenant, caller, args["app"]), args["collection"], args["id"])


def records_create(tenant: Tenant, caller: Caller, args: dict) -> dict:
    return records.create_record(
        _scope(tenant, caller, args["app"], writes=True), args["collection"], args["data"]
    )


def records_update(tenant: Tenant, caller: Caller, args: dict) -> dict:
    return records.update_record(
        _scope(tenant, caller, args["app"], writes=True), args["collection"], args["id"], args["data"]
    )


def records_delete(tenant: Tenant, caller: Caller, args: dict) -> dict:
    return records.delete_record(
        _scope(tenant, caller, args["app"], writes=True), args["collection"], args["id"]
    )
