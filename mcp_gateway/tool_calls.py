"""tools/list and tools/call for one caller: the synchronous core the MCP server calls into."""

from __future__ import annotations

import base64
import logging
import time
from typing import Any

import mcp.types as types
from django.conf import settings

from apps_runtime.dispatch import load_app, run_route
from apps_runtime.exceptions import RuntimeDomainError
from mcp_gateway.arguments import argument_problems
from mcp_gateway.audit import record_call
from mcp_gateway.builtins import BUILTINS
from mcp_gateway.catalog import CatalogEntry, catalog_for
from mcp_gateway.exceptions import InvalidCursor, ToolUnavailable
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.results import error_result, invalid_arguments_result, json_result, route_result
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("mcp_gateway.tool_calls")
Outcome = ToolCallAudit.Outcome
APP_TOOLS_OFF = "App tools are switched off for this tenant (setting customAppsMcpTools)."


def visible_tools(tenant: Tenant, caller: Caller) -> list[CatalogEntry]:
    return catalog_for(tenant).visible(caller, app_tools=tenant.setting("customAppsMcpTools"))


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        kind, _, value = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        offset = int(value)
    except (ValueError, UnicodeDecodeError) as err:
        raise InvalidCursor() from err
    if kind != "o" or offset < 0:
        raise InvalidCursor()
    return offset


def list_tools(tenant: Tenant, caller: Caller, cursor: str | None) -> types.ListToolsResult:
    """One page of the caller's tools.

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    tools = visible_tools(tenant, caller)
    start = _decode_cursor(cursor) if cursor else 0
    size = settings.MCP_PAGE_SIZE
    page = tools[start : start + size]
    next_cursor = _encode_cursor(start + size) if start + size < len(tools) else None
    return types.ListToolsResult(tools=[entry.tool for entry in page], next_cursor=next_cursor)


def resolve_tool(tenant: Tenant, caller: Caller, name: str) -> CatalogEntry:
    """The tool ``name`` if the caller may call it now.

    Raises:
        ToolUnavailable: unknown, hidden from this caller, or an app tool while app tools are off.
    """
    entry = catalog_for(tenant).by_name.get(name)
    if entry is None or not entry.visible_to(caller):
        raise ToolUnavailable(name)
    if entry.builtin is None and not tenant.setting("customAppsMcpTools"):
        raise ToolUnavailable(name, f"Unknown tool: {name}. {APP_TOOLS_OFF}")
    return entry


def call_tool(
    tenant: Tenant, caller: Caller, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    """Validate, run as the caller, map the result, and audit the call.

    Raises:
        ToolUnavailable: see ``resolve_tool``.
    """
    arguments = arguments or {}
    started = time.perf_counter()
    try:
        entry = resolve_tool(tenant, caller, name)
    except ToolUnavailable:
        record_call(caller, name, arguments, outcome=Outcome.DENIED, duration_ms=0.0)
        raise
    problems = argument_problems(entry.validator, arguments)
    if problems:
        record_call(caller, name, arguments, outcome=Outcome.INVALID_ARGUMENTS, duration_ms=0.0)
        return invalid_arguments_result(problems)
    if entry.builtin is not None:
        result, audit = _call_builtin(tenant, caller, entry, arguments)
    else:
        result, audit = _call_app_tool(tenant, caller, entry, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    record_call(caller, name, arguments, duration_ms=elapsed, **audit)
    return result


def _call_builtin(tenant: Tenant, caller: Caller, entry: CatalogEntry, arguments: dict) -> tuple:
    try:
        value = BUILTINS[entry.builtin](tenant, caller, arguments)
    except RuntimeDomainError as err:
        return error_result(err.message), {"outcome": Outcome.TOOL_ERROR}
    return json_result(value), {"outcome": Outcome.OK}


def _call_app_tool(tenant: Tenant, caller: Caller, entry: CatalogEntry, arguments: dict) -> tuple:
    try:
        loaded = load_app(tenant, entry.app_name)
        route = loaded.compiled.routes.by_key[entry.route_key]
        result = run_route(
            loaded,
            route,
            caller,
            body=arguments,
            query={k: v for k, v in arguments.items() if isinstance(v, str | int | float | bool)},
            params={p: str(arguments[p]) for p in route.params},
            tool={"name": entry.wire_name, "arguments": arguments},
        )
    except RuntimeDomainError as err:
        # The catalog said yes but the runtime said no (a change raced this call).
        return error_result(err.message), {"outcome": Outcome.DENIED, "app_name": entry.app_name or ""}
    audit = {"app_name": loaded.app.name, "app_version": loaded.version.number}
    if result.failed:
        audit.update(outcome=Outcome.HANDLER_FAILED, error_id=result.error_id)
    elif result.status >= 400:
        audit.update(outcome=Outcome.TOOL_ERROR)
    else:
        audit.update(outcome=Outcome.OK)
    mapped = route_result(result, entry.output_validator)
    if mapped.is_error and audit["outcome"] == Outcome.OK:
        audit["outcome"] = Outcome.TOOL_ERROR  # broke its own outputSchema
    return mapped, audit
