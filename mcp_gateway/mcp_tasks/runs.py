"""One run of an MCP task: the deferred tools/call, as its caller, its result kept on the task.

The run goes through ``tool_calls.call_tool`` like any call (the same checks, result mapping and
one audit row with the real outcome), with the longer time limit of a task. It acts as its creator
as of when it starts (``tenants.callers.caller_now``): rights read afresh, nothing run once the credential is
revoked.
"""

from __future__ import annotations

import json
import logging

import mcp.types as types
from django.conf import settings

from apps_runtime.dispatch import effective_timeout_ms, load_app
from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.storage_quota import StorageQuotaExceeded, check_room
from mcp_gateway.audit_log import record_call
from mcp_gateway.exceptions import InternalError, ToolUnavailable
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.callers import CREDENTIAL_GONE
from mcp_gateway.mcp_tasks.progress import TaskStatusEvents
from mcp_gateway.models import ToolCallAudit, ToolTask
from mcp_gateway.tools.call import calls as tool_calls
from mcp_gateway.tools.call.confirmation import CONFIRMED_AT_CREATION
from mcp_gateway.tools.pipeline.asks import MAX_ROUNDS, Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result
from tenants.callers import Caller, caller_now

logger = logging.getLogger("mcp_gateway.mcp_tasks.runs")

NOT_STARTED = (
    "The task did not run: this workspace's share of the task workers stayed busy for {seconds} s "
    "after it was created. Nothing ran; call the tool again later"
)


def execute_task(task_id: str) -> ToolTask | None:
    """Run a queued task once; a task already started, ended or purged is left alone."""
    task = ToolTask.all_tenants.select_related("tenant").filter(task_id=task_id).first()
    if task is None or task.finished or task.started_at is not None:
        return task
    if task_store.waited_too_long(task):
        # Bounded waiting: a task its tenant's share could not start in time is refused, not run late.
        if task_store.fail_unstarted(task, NOT_STARTED.format(seconds=settings.TASK_QUEUE_SECONDS)):
            record_call(
                Caller.from_snapshot(task.tenant_id, task.caller),
                task.wire_name,
                task.arguments,
                outcome=ToolCallAudit.Outcome.RATE_LIMITED,
                duration_ms=0,
            )
        return task
    if not task_store.claim(task, _timeout_ms(task)):
        logger.info("Task %s was started, cancelled or purged by someone else", task_id)
        return task
    outcome, by_platform = _run(task, Caller.from_snapshot(task.tenant_id, task.caller))
    if isinstance(outcome, Asked):
        parked = _park(task, outcome)
        if parked is None:
            return task
        outcome = parked
    wire, size, refused = _bounded(task, outcome.model_dump(by_alias=True, mode="json", exclude_none=True))
    failed = bool(wire.get("isError"))
    if not task_store.finish(task, wire, size, failed=failed, by_platform=by_platform or refused):
        logger.info("Task %s ended after it was cancelled or declared lost: its result is dropped", task_id)
    return task


def _park(task: ToolTask, asked: Asked) -> types.CallToolResult | None:
    """The run asked its caller (a task of the 2026-07-28 extension): the task waits for the answers
    (None), or the run ends with the error result saying why it cannot ask."""
    missing = asked.capabilities_needed() - set(task.can_ask)
    if missing:
        return error_result(
            f"The tool asks its caller through {', '.join(sorted(missing))}, which the client that "
            "created the task did not declare. Nothing else ran."
        )
    if task.input_rounds >= MAX_ROUNDS:
        return error_result(f"The tool asked more than {MAX_ROUNDS} rounds of questions; nothing more ran.")
    requests = {
        key: request.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, request in asked.requests.items()
    }
    if not task_store.park(task, requests):
        logger.info("Task %s asked after it was cancelled or declared lost: nothing is asked", task.task_id)
    return None


def _timeout_ms(task: ToolTask) -> int:
    """The run's time limit, for the task's deadline (the route's own, capped for tasks)."""
    try:
        entry = tool_calls.catalog_for(task.tenant).by_name.get(task.wire_name)
        if entry is None or entry.builtin is not None:
            return settings.SANDBOX_MAX_TIMEOUT_MS
        app_name, route_key = entry.route_address
        route = load_app(task.tenant, app_name).compiled.routes.by_key[route_key]
    except (RuntimeDomainError, KeyError):
        return settings.SANDBOX_MAX_TIMEOUT_MS  # the run itself reports what is gone
    return effective_timeout_ms(route, settings.TASK_MAX_TIMEOUT_MS)


def _run(task: ToolTask, created_by: Caller) -> tuple[types.CallToolResult | Asked, bool]:
    """The run's outcome (its result, or the questions its handler asks), and whether the platform
    (not the tool) failed it."""
    caller = caller_now(task.tenant, task.caller)
    if caller is None:
        record_call(
            created_by, task.wire_name, task.arguments, outcome=ToolCallAudit.Outcome.DENIED, duration_ms=0
        )
        return error_result(CREDENTIAL_GONE), False
    try:
        # The run has no request: its context is what the task kept of the call that created it.
        call = CallContext(
            task.tenant,
            caller,
            origin=task.link_origin,
            can_ask=tuple(task.can_ask),
            events=TaskStatusEvents(task),
        )
        outcome = tool_calls.run_call(
            call, task.wire_name, task.arguments, CONFIRMED_AT_CREATION, as_task=True, answers=task.answers
        )
        return outcome, False
    except ToolUnavailable as err:  # gone or hidden since the task was created: audited as denied
        return error_result(str(err)), False
    except InternalError as err:  # logged and audited under its error id
        return error_result(str(err)), True


def _bounded(task: ToolTask, wire: dict) -> tuple[dict, int, bool]:
    """The result a task keeps, its size, and whether the platform refused to keep the run's own:
    then an error saying why (over TASK_MAX_RESULT_BYTES, or over the tenant's storage quota or the
    member's share of it)."""
    size = len(json.dumps(wire, ensure_ascii=False).encode())
    limit = settings.TASK_MAX_RESULT_BYTES
    if size > limit:
        message = f"The tool's result is {size} bytes, over the {limit} bytes a task keeps"
    else:
        try:
            check_room(task.tenant_id, task.member, size, what="The tool's result")
        except StorageQuotaExceeded as refused:
            message = refused.message
        else:
            return wire, size, False
    error = error_result(message).model_dump(by_alias=True, mode="json", exclude_none=True)
    return error, len(json.dumps(error, ensure_ascii=False).encode()), True


def audit_lost(task: ToolTask) -> None:
    """The audit row of a run lost with its process (``task_store.fail_lost`` has ended the task)."""
    logger.warning("Task %s: its run was lost with its process", task.task_id)
    created_by = Caller.from_snapshot(task.tenant_id, task.caller)
    record_call(
        created_by,
        task.wire_name,
        task.arguments,
        outcome=ToolCallAudit.Outcome.PLATFORM_ERROR,
        duration_ms=0,
    )
