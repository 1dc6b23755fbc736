"""tools/list and tools/call for one caller: the synchronous core the MCP server calls into."""

from __future__ import annotations

import functools
from typing import Any

import mcp.types as types
from django.conf import settings

from apps_runtime.dispatch import RouteCall, load_app, run_route
from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.json_values import value_problem
from mcp_gateway.audit_log import AuditRecord
from mcp_gateway.exceptions import InsufficientScope, ToolUnavailable
from mcp_gateway.limits.rate_limits import at_rate_limit, enforce_rate_limit
from mcp_gateway.models import Approval, ToolCallAudit
from mcp_gateway.tools.call import approvals
from mcp_gateway.tools.call.code_mode import run_code
from mcp_gateway.tools.call.confirmation import (
    Confirmation,
    Verdict,
    confirmation_asked,
    confirmed,
    needs_confirmation,
    refusal,
)
from mcp_gateway.tools.call.modes import refuse_synchronous_call
from mcp_gateway.tools.catalog.builtins import BUILTINS, RUN_CODE, Builtin
from mcp_gateway.tools.catalog.catalog import (
    CatalogEntry,
    catalog_for,
    listed_tools,
    needed_scope,
    visible_tools,
)
from mcp_gateway.tools.catalog.cursors import page_of
from mcp_gateway.tools.pipeline.arguments import argument_problems
from mcp_gateway.tools.pipeline.asks import Asked, AskRefused, checked_questions
from mcp_gateway.tools.pipeline.audit import audited_call
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.links import app_route_url
from mcp_gateway.tools.pipeline.results import (
    error_result,
    invalid_arguments_result,
    json_result,
    route_result,
)
from mcp_gateway.tools.pipeline.rich_content import ContentOrigin
from mcp_gateway.tools.pipeline.url_asks import asked_to_connect
from mcp_gateway.tools.resources.resources import resource_catalog
from tenants.callers import Caller
from tenants.models import Tenant

Outcome = ToolCallAudit.Outcome
__all__ = ["CallContext", "call_tool", "list_tools", "resolve_tool", "run_call", "visible_tools"]
APP_TOOLS_OFF = "App tools are switched off for this tenant (setting customAppsMcpTools)."
CODE_MODE_OFF = "Code mode is switched off for this tenant (setting codeMode)."
APP_ONLY = "It is called from its app's view, in a client that shows MCP Apps."


def list_tools(
    tenant: Tenant, caller: Caller, cursor: str | None, *, ui_host: bool = False
) -> types.ListToolsResult:
    """One page of the caller's tools (``ui_host``: for a client that shows MCP Apps views).

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    page, next_cursor = page_of(listed_tools(tenant, caller, ui_host=ui_host), "o", cursor)
    return types.ListToolsResult(tools=[entry.tool for entry in page], next_cursor=next_cursor)


def resolve_tool(call: CallContext, name: str) -> CatalogEntry:
    """The tool ``name`` if the call's caller may call it now, from its client.

    Raises:
        ToolUnavailable: unknown, hidden from this caller, or an app tool while app tools are off;
            ``InsufficientScope``: the member's, but not carried by their connection.
    """
    tenant = call.tenant
    entry = catalog_for(tenant).by_name.get(name)
    if entry is None:
        raise ToolUnavailable(name)
    if not entry.visible_to(call.caller):
        scope = needed_scope(entry, call.caller)
        raise ToolUnavailable(name) if scope is None else InsufficientScope(name, scope)
    if entry.builtin is None and not tenant.setting("customAppsMcpTools"):
        raise ToolUnavailable(name, f"Unknown tool: {name}. {APP_TOOLS_OFF}")
    if entry.builtin == RUN_CODE and not tenant.setting("codeMode"):
        raise ToolUnavailable(name, f"Unknown tool: {name}. {CODE_MODE_OFF}")
    if entry.app_only and not call.ui_host:
        raise ToolUnavailable(name, f"Unknown tool: {name}. {APP_ONLY}")
    return entry


def call_tool(
    tenant: Tenant,
    caller: Caller,
    name: str,
    arguments: dict[str, Any] | None,
    confirmation: Confirmation | None = None,
) -> types.CallToolResult | Asked:
    """One tools/call as ``caller``, outside an MCP request (the console, a screen host): ``run_call``
    with a context of its own (no client features, nobody to ask: a ``confirm`` tool is refused
    unless ``confirmation`` lets it run)."""
    return run_call(CallContext(tenant, caller), name, arguments, confirmation)


def run_call(
    call: CallContext,
    name: str,
    arguments: dict[str, Any] | None,
    confirmation: Confirmation | None = None,
    answers: dict[str, dict] | None = None,
    *,
    as_task: bool = False,
) -> types.CallToolResult | Asked:
    """The one tools/call pipeline: resolve, preflight, run as the caller, map the result; one audit
    row, whatever happens, except when the call only asks for the user's confirmation.

    A tool marked ``confirm`` runs only with the user's ``confirmation``: without one, a caller that
    can confirm (``call.can_confirm``) gets the question (``Asked.confirms``) for the protocol layer
    (``protocol.asking``) to put, then calls again with the verdict; any other caller is refused.
    ``as_task``: this is the background run of an MCP task (``task_runs.py``), which may take up to
    TASK_MAX_TIMEOUT_MS; otherwise a tool whose ``task`` is ``required`` is refused.
    ``answers``: the caller's answers to the handler's questions so far; a handler that asks more
    (of the kinds ``call.can_ask``) gets its checked questions returned (``Asked``, audited
    ``input_required``) for the protocol layer to put to the client.

    Raises:
        ToolUnavailable: see ``resolve_tool``.
        InternalError: the platform failed; logged under the error id and audited as ``platform_error``.
    """
    arguments = arguments or {}
    with audited_call(call, name, arguments) as audit:
        return _call(call, name, arguments, audit, confirmation, as_task=as_task, answers=answers)


def preflight(
    call: CallContext,
    entry: CatalogEntry,
    arguments: dict,
    audit: AuditRecord,
    confirmation: Confirmation | None,
    *,
    count_call: bool = True,
    for_task: bool = False,
) -> types.CallToolResult | Asked | Approval | None:
    """The checks of every tools/call (run now or as a task) once its tool is resolved, in order:
    arguments against ``inputSchema``, the rate limit (``count_call``: this call counts), the
    confirmation (a caller that cannot be asked: the approval policy, ``tools.approvals.gate``, which
    answers with the approval to decide, or lets an approved call run once).
    The refusal to answer with, its outcome in ``audit``; or the question to put
    first (a call that would run and waits for the user's yes: nothing counted, no audit row);
    or, for a call creating a task (``for_task``), the new ``Approval`` its task is to wait on
    (audited ``approval_required``); None when the call may go on.
    """
    problems = argument_problems(entry.validator, arguments)
    if problems:
        audit.refused(Outcome.INVALID_ARGUMENTS)
        return invalid_arguments_result(problems)
    out_of_band = False
    if confirmation is None and needs_confirmation(call.tenant, entry):
        if not call.can_confirm:
            out_of_band = True  # nobody to ask in the call: a person approves it elsewhere
        elif not (count_call and at_rate_limit(call.tenant, call.caller, entry)):
            audit.unrecorded()  # asked, not answered: the call that carries the verdict is audited
            return confirmation_asked(entry, arguments)
    refused = enforce_rate_limit(call.tenant, call.caller, entry) if count_call else None
    if refused is not None:
        audit.refused(Outcome.RATE_LIMITED)
        return refused
    if out_of_band:
        gated = approvals.gate(call, entry, arguments, for_task=for_task)
        if not gated.runs:
            audit.refused(gated.outcome)
            if for_task and gated.waiting is not None:
                return gated.waiting  # its task waits on it, whatever the client can ask
            return approvals.asked(call, gated)  # by URL where the client can be asked so
        audit.approved = True
        confirmation = Confirmation(Verdict.ACCEPTED)
    refused = refusal(call.tenant, entry, confirmation)
    if refused is not None:
        audit.refused(Outcome.DECLINED)
        return refused
    return None


def _call(
    call: CallContext,
    name: str,
    arguments: dict,
    audit: AuditRecord,
    confirmation: Confirmation | None,
    *,
    as_task: bool = False,
    answers: dict[str, dict] | None = None,
) -> types.CallToolResult | Asked:
    entry = resolve_tool(call, name)
    if not as_task:
        refuse_synchronous_call(entry)
    # A task's run was counted when its tools/call created it (mcp_tasks/calls.py).
    stopped = preflight(call, entry, arguments, audit, confirmation, count_call=not as_task)
    assert not isinstance(stopped, Approval)  # only a task's creation (``for_task``) waits on one
    if stopped is not None:
        return stopped
    if entry.builtin == RUN_CODE:
        # Each call of the script goes through this pipeline again, as the same caller.
        return run_code(call, entry, arguments, audit, confirmation, run_call)
    result: types.CallToolResult | Asked
    if entry.builtin is not None:
        result = _call_builtin(call, entry, BUILTINS[entry.builtin], arguments, audit)
    else:
        result = _call_app_tool(call, entry, arguments, audit, as_task=as_task, answers=answers)
    if audit.outcome == Outcome.OK and (audit.approved or confirmed(entry, confirmation)):
        audit.ended(Outcome.CONFIRMED)
    return result


def _call_builtin(
    call: CallContext, entry: CatalogEntry, builtin: Builtin, arguments: dict, audit: AuditRecord
) -> types.CallToolResult:
    try:
        value = builtin(
            call.tenant, call.caller, arguments, version=call.protocol_version, ui_host=call.ui_host
        )
    except RuntimeDomainError as err:
        audit.ended(Outcome.TOOL_ERROR)
        return error_result(err.message)
    mapped = json_result(value, budget=entry.output_budget(call.tenant))
    audit.ended(Outcome.TOOL_ERROR if mapped.is_error else Outcome.OK)
    return mapped


def _call_app_tool(
    call: CallContext,
    entry: CatalogEntry,
    arguments: dict,
    audit: AuditRecord,
    *,
    as_task: bool = False,
    answers: dict[str, dict] | None = None,
) -> types.CallToolResult | Asked:
    tenant = call.tenant
    app_name, route_key = entry.route_address
    audit.app(app_name)
    try:
        loaded = load_app(tenant, app_name)
        audit.ran(loaded.app.name, loaded.version.number)
        route = loaded.compiled.routes.by_key[route_key]
        result = run_route(
            RouteCall(
                loaded,
                route,
                call.caller,
                body=arguments,
                query={k: v for k, v in arguments.items() if isinstance(v, str | int | float | bool)},
                params={p: str(arguments[p]) for p in route.params},
                tool={"name": entry.wire_name, "arguments": arguments},
                timeout_cap_ms=settings.TASK_MAX_TIMEOUT_MS if as_task else None,
                events=call.events,
                answers=answers,
                can_ask=call.can_ask,
                traceparent=call.traceparent,
            )
        )
    except RuntimeDomainError as err:
        # The catalog said yes but the runtime said no (a change raced this call).
        audit.refused(Outcome.DENIED)
        return error_result(err.message)
    if result.asks is not None and not result.failed:
        return _asked(result.asks, audit, task_without_answers=as_task and not call.can_ask)
    if result.error_id is not None:  # failed
        audit.failed(result.error_id)
    elif result.status >= 400:
        audit.ended(Outcome.TOOL_ERROR)
    else:
        audit.ended(Outcome.OK)
    links = functools.partial(app_route_url, call.link_origin, tenant.slug, loaded.app.name)
    origin = ContentOrigin(loaded.app.name, lambda uri: resource_catalog(tenant).owner(uri))
    try:
        mapped = route_result(result, entry.output_validator, entry.output_budget(tenant), links, origin)
    except UnicodeEncodeError:
        # The handler's JSON held a lone surrogate, which no UTF-8 answer can carry: the tool's
        # fault, said with a pointer; looked for only here, so a normal result costs no extra walk.
        audit.ended(Outcome.TOOL_ERROR)
        problem = value_problem(result.body) or "/: is not valid Unicode text"
        return error_result(f"The tool returned a value the platform cannot send: {problem}.")
    if mapped.is_error and audit.outcome == Outcome.OK:
        audit.ended(Outcome.TOOL_ERROR)  # broke its own outputSchema or its output budget
    if mapped.is_error and result.missing_connection:
        # It failed for want of the caller's own account: asked to connect it, where the client can
        # be asked by URL, and run again once connected.
        asked = asked_to_connect(call, result.missing_connection, mapped)
        if isinstance(asked, Asked):
            audit.ended(Outcome.INPUT_REQUIRED)
        return asked
    return mapped


def _asked(raw: object, audit: AuditRecord, *, task_without_answers: bool) -> types.CallToolResult | Asked:
    """The handler's questions, checked, for the protocol layer (or a task's run) to put to the client."""
    audit.ended(Outcome.TOOL_ERROR)
    # A handshake-era task (or one whose client answers nothing) has nobody to ask: tasks/update,
    # which carries the answers to a task, is the 2026-07-28 extension's.
    if task_without_answers:
        return error_result("The tool asked its caller for input, which a task run cannot carry.")
    try:
        asked = checked_questions(raw)
    except AskRefused as err:
        return error_result(str(err))
    audit.ended(Outcome.INPUT_REQUIRED)
    return asked
