"""The tasks extension of 2026-07-28 (``io.modelcontextprotocol/tasks``, SEP-2663) for one caller.

The same tasks as the 2025-11-25 core methods (``calls.py``), in the extension's shapes:

- ``tools/call`` of a task tool is answered with a flat ``CreateTaskResult`` (``resultType: "task"``
  and the task's fields at the top level, no ``task`` wrapper).
- ``tasks/get`` is the only way to read a task (there is no blocking ``tasks/result``): it inlines
  the tool's result once the task has ended, the questions of a run waiting on its caller
  (``input_required`` with ``inputRequests``), or the error of a run the platform failed.
- ``tasks/update`` carries the caller's answers to those questions; once every one is answered the
  run is sent again and replays the handler with them, as an ``InputRequiredResult`` round does.
- ``tasks/cancel`` is acknowledged with an empty result, also for a task that had already ended.

A tool's own error is a ``completed`` task whose result has ``isError`` (the extension keeps
``failed`` for protocol-level errors); a run the platform failed (lost, never started, a result it
would not keep) is ``failed`` with a JSON-RPC error. Every call checks the caller's credential
(``task_store.owned``): another caller's handle is "not found", like an unknown one.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from pydantic import ValidationError

from mcp_gateway.exceptions import TaskFinished, ToolUnavailable
from mcp_gateway.mcp_tasks import calls as task_calls
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.queue import send_on_commit
from mcp_gateway.models import ToolTask
from mcp_gateway.tools.call.calls import resolve_tool
from mcp_gateway.tools.call.confirmation import Confirmation
from mcp_gateway.tools.call.modes import OPTIONAL, REQUIRED
from mcp_gateway.tools.pipeline.asks import AnswersRefused, Asked, checked_answers
from mcp_gateway.tools.pipeline.call_context import CallContext
from tenants.callers import Caller
from tenants.models import Tenant

EXTENSION = "io.modelcontextprotocol/tasks"
Status = ToolTask.Status


def task_mode(call: CallContext, name: str) -> str | None:
    """``optional`` or ``required`` for a task tool of the caller's; None for any other name (the
    call itself then says what is wrong with it)."""
    try:
        entry = resolve_tool(call, name)
    except ToolUnavailable:
        return None
    return entry.task_support if entry.task_support in (OPTIONAL, REQUIRED) else None


def _handle(task: ToolTask) -> dict[str, Any]:
    """The fields of the extension's ``Task``: integer milliseconds, ISO 8601 times."""
    handle: dict[str, Any] = {
        "taskId": task.task_id,
        "status": _status(task),
        "createdAt": task.created_at.isoformat(),
        "lastUpdatedAt": task.updated_at.isoformat(),
        "ttlMs": task.ttl_ms,
        "pollIntervalMs": task.poll_interval_ms,
    }
    if task.status_message:
        handle["statusMessage"] = task.status_message
    return handle


def _status(task: ToolTask) -> str:
    if task.status == Status.FAILED and not task.platform_failure:
        return Status.COMPLETED  # the tool ran and answered with an error: its result says so
    return task.status


def created(task: ToolTask) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a new task."""
    return {"resultType": "task", **_handle(task)}


def create_task(
    call: CallContext,
    name: str,
    arguments: dict[str, Any] | None,
    confirmation: Confirmation | None,
) -> dict[str, Any] | Asked:
    """Answer a ``tools/call`` of a task tool from a client that declared the extension: the new
    task, or the tool error that refused it (see ``task_calls.create_task``)."""
    return task_calls.create_task(call, name, arguments, None, confirmation, answer=created)


def detailed(task: ToolTask) -> dict[str, Any]:
    """The ``DetailedTask`` that ``tasks/get`` answers."""
    shown = _handle(task)
    if task.status == Status.INPUT_REQUIRED:
        shown["inputRequests"] = task.input_requests or {}
    elif task.status == Status.FAILED and task.platform_failure:
        shown["error"] = {"code": types.INTERNAL_ERROR, "message": _failure_message(task)}
    elif task.finished and task.result:
        shown["result"] = task.result
    return shown


def _failure_message(task: ToolTask) -> str:
    if task.status_message:
        return task.status_message
    blocks = (task.result or {}).get("content", [])
    texts = [block.get("text") for block in blocks if block.get("type") == "text"]
    return next((text for text in texts if text), "The platform failed the task's run")


def get_task(tenant: Tenant, caller: Caller, task_id: str) -> dict[str, Any]:
    """Raises: TaskNotFound: unknown, expired or another caller's."""
    return detailed(task_calls.current_task(tenant, caller, task_id))


def cancel_task(tenant: Tenant, caller: Caller, task_id: str) -> dict[str, Any]:
    """Cancel the caller's task; a task that had already ended is left as it ended (the same ack).

    Raises:
        TaskNotFound: unknown, expired or another caller's.
    """
    try:
        task_store.cancel(tenant, caller, task_id)
    except TaskFinished:
        pass
    return {}


def update_task(tenant: Tenant, caller: Caller, task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    """Keep the caller's answers to the questions its task waits on; send the run again once none
    is left. Answers to questions the task does not wait on are ignored (the ack is the same).

    Raises:
        TaskNotFound: unknown, expired or another caller's.
        AnswersRefused: answers over their size bounds.
    """
    pending = task_store.owned(tenant, caller, task_id).input_requests or {}
    try:
        given = checked_answers({key: value for key, value in responses.items() if key in pending})
    except ValidationError as err:
        problems = err.error_count()
        raise AnswersRefused(
            f"inputResponses: not answers to the task's questions ({problems} problems)"
        ) from None
    if given and task_store.answer(tenant, caller, task_id, given):
        send_on_commit([task_id])
    return {}
