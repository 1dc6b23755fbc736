"""The MCP task methods for one caller: the synchronous core ``task_methods.py`` calls into.

A task-augmented ``tools/call`` is checked like any call (the tool is the caller's, it supports
tasks, the arguments pass ``inputSchema``), then answered at once with the task; its audit row says
``task_created``, and the run writes a row of its own when it ends. A ``confirm`` tool's call from a
client that cannot be asked creates the task ``input_required`` on an approval of its own (audited
``approval_required``): ``approval_waits`` runs it once a person approves, or ends it refused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

import mcp.types as types
from django.utils import timezone

from mcp_gateway.audit_log import AuditRecord
from mcp_gateway.exceptions import TaskLimitReached
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.approval_waits import settle, waits_on_approval
from mcp_gateway.mcp_tasks.queue import send_on_commit
from mcp_gateway.mcp_tasks.runs import audit_lost
from mcp_gateway.models import Approval, ToolCallAudit, ToolTask
from mcp_gateway.tools.call import approvals
from mcp_gateway.tools.call.calls import preflight, resolve_tool
from mcp_gateway.tools.call.confirmation import Confirmation
from mcp_gateway.tools.call.modes import refuse_task_call
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.audit import audited_call
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("mcp_gateway.mcp_tasks.calls")
Outcome = ToolCallAudit.Outcome
RELATED_TASK = "io.modelcontextprotocol/related-task"
LIST_PAGE_SIZE = 50


def _wire(model: types.Result) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def task_model(task: ToolTask) -> types.Task:
    return types.Task(
        task_id=task.task_id,
        # ToolTask.Status holds the protocol's TaskStatus words (a test keeps the two the same).
        status=cast(types.TaskStatus, task.status),
        status_message=task.status_message or None,
        created_at=task.created_at.isoformat(),
        last_updated_at=task.updated_at.isoformat(),
        ttl=task.ttl_ms,
        poll_interval=task.poll_interval_ms,
    )


def created_result(task: ToolTask) -> dict[str, Any]:
    """``CreateTaskResult``, plus a text ``content`` block naming the task.

    The extra member is allowed by the schema (results are open), and clients that check every
    ``tools/call`` result against ``CallToolResult`` (the SDK 2.3 client does) then accept it.
    """
    wire = _wire(types.CreateTaskResult(task=task_model(task)))
    text = f"Started task {task.task_id}: poll tasks/get, then read the result with tasks/result."
    if task.status == ToolTask.Status.INPUT_REQUIRED:  # waiting on a person's approval
        text = (
            f"Created task {task.task_id}, which does not run yet. {task.status_message} Poll tasks/get, "
            "or call tasks/result, which waits for the decision and the run."
        )
    wire["content"] = [{"type": "text", "text": text}]
    return wire


def create_task(
    call: CallContext,
    name: str,
    arguments: dict[str, Any] | None,
    ttl_ms: int | None,
    confirmation: Confirmation | None = None,
    *,
    answer: Callable[[ToolTask], dict[str, Any]] = created_result,
) -> dict[str, Any] | Asked:
    """Answer a task-augmented ``tools/call``: the task (as ``answer`` shapes it), or a tool error;
    audited either way. The task keeps the call's origin (for its links) and the kinds of question
    its client answers while it runs (``call.can_ask``: the 2026-07-28 extension's ``tasks/update``;
    the protocol layer passes none on 2025-11-25).

    Raises:
        ToolUnavailable: unknown or hidden tool (``TaskModeRefused``: a tool without ``task``).
        InternalError: the platform failed; logged under the error id.
    """
    arguments = arguments or {}
    with audited_call(call, name, arguments) as audit:
        created = _create(call, name, arguments, ttl_ms, audit, confirmation)
        return answer(created) if isinstance(created, ToolTask) else created


def _create(
    call: CallContext,
    name: str,
    arguments: dict,
    ttl_ms: int | None,
    audit: AuditRecord,
    confirmation: Confirmation | None,
) -> ToolTask | Asked | dict[str, Any]:
    entry = resolve_tool(call, name)
    refuse_task_call(entry)
    audit.app(entry.app_name or "")
    # The run goes on this yes (or on the approval the task waits for).
    stopped = preflight(call, entry, arguments, audit, confirmation, for_task=True)
    if isinstance(stopped, Asked):
        return stopped  # the user's yes first, then the task (``protocol.asking`` asks)
    approval = None
    if isinstance(stopped, Approval):
        approval = stopped
    elif stopped is not None:
        return _wire(stopped)
    try:
        task = task_store.create(
            call.tenant,
            call.caller,
            name,
            arguments,
            ttl_ms,
            call.can_ask,
            origin=call.origin,
            approval=approval,
            waiting_message=approvals.waiting_message(call, approval) if approval is not None else "",
        )
    except TaskLimitReached as err:
        if approval is not None:
            approvals.withdraw(approval)
        audit.refused(Outcome.RATE_LIMITED)
        return _wire(error_result(str(err)))
    if approval is None:  # else it stays audited approval_required: nothing runs before a decision
        audit.ended(Outcome.TASK_CREATED)
        send_on_commit([task.task_id])
    return task


def get_task(tenant: Tenant, caller: Caller, task_id: str) -> types.GetTaskResult:
    """The caller's task, caught up if the process running it died (``_catch_up``).

    Raises:
        TaskNotFound: unknown, expired or another caller's.
    """
    return types.GetTaskResult(**task_model(current_task(tenant, caller, task_id)).model_dump())


def current_task(tenant: Tenant, caller: Caller, task_id: str) -> ToolTask:
    """The caller's task as of now (see ``get_task``).

    Raises:
        TaskNotFound: unknown, expired or another caller's.
    """
    task = task_store.owned(tenant, caller, task_id)
    _catch_up(task)
    return task


def _catch_up(task: ToolTask) -> None:
    """A task whose server or worker died: a queued run is sent again, a running one ends failed;
    a task waiting on its approval runs or ends as the approval now says (decided, or expired).

    The sweep does the same for every tenant each minute; a caller polling need not wait for it.
    """
    if waits_on_approval(task):
        settle(task)  # decided (in another process, say) or expired since: run it or end it
        task.refresh_from_db()
        return
    now = timezone.now()
    if task_store.forgotten(task, now):
        logger.info("Task %s was queued and never started: sending its run again", task.task_id)
        task_store.mark_resent([task.task_id], now)
        send_on_commit([task.task_id])
    elif task_store.lost(task, now) and task_store.fail_lost(task, now):
        audit_lost(task)
        task.refresh_from_db()


def list_tasks(tenant: Tenant, caller: Caller, cursor: str | None) -> types.ListTasksResult:
    """One page of the caller's own tasks, newest first.

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    tasks, next_cursor = task_store.page(tenant, caller, cursor, LIST_PAGE_SIZE)
    return types.ListTasksResult(tasks=[task_model(task) for task in tasks], next_cursor=next_cursor)


def cancel_task(tenant: Tenant, caller: Caller, task_id: str) -> types.CancelTaskResult:
    """Raises: TaskNotFound, TaskFinished (see ``task_store.cancel``)."""
    task = task_store.cancel(tenant, caller, task_id)
    return types.CancelTaskResult(**task_model(task).model_dump())


CANCELLED_RESULT = "The task was cancelled before it finished: it has no result"


def task_payload(tenant: Tenant, caller: Caller, task_id: str) -> dict[str, Any] | None:
    """The ``tools/call`` result of the caller's ended task, or None while it is working.

    Raises:
        TaskNotFound: unknown, expired or another caller's.
    """
    task = task_store.owned(tenant, caller, task_id)
    if not task.finished:
        _catch_up(task)
    if not task.finished:
        return None
    payload = dict(task.result) if task.result else _wire(error_result(CANCELLED_RESULT))
    # The stored result is the SDK model's dump, with its 2026-07-28 ``resultType``: tasks/result is a
    # 2025-11-25 method, whose results have none (the SDK adds it itself to 2026-era answers).
    payload.pop("resultType", None)
    payload["_meta"] = {**(payload.get("_meta") or {}), RELATED_TASK: {"taskId": task.task_id}}
    return payload
