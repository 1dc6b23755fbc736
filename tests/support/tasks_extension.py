"""A client side of the 2026-07-28 tasks extension for the official SDK client, which has none.

``TasksClient`` declares ``io.modelcontextprotocol/tasks`` in every request's client capabilities
and claims the ``resultType: "task"`` answer of ``tools/call`` (``CreatedTask``); ``session.call_tool``
with ``allow_claimed=True`` returns it, and ``get``/``update``/``cancel`` send the extension's
methods through the SDK session (``Mcp-Name`` carries the task id, as the extension asks).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
import mcp.types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict, TypeAdapter

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
_RAW = TypeAdapter(dict[str, Any])


class CreatedTask(types.Result):
    """The extension's flat ``CreateTaskResult``."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class _TaskParams(types.RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any]


class _GetTask(types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"


class _CancelTask(types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param: ClassVar[str | None] = "taskId"


async def get(session, task_id: str) -> dict[str, Any]:
    return await session.send_request(_GetTask(params=_TaskParams(task_id=task_id)), _RAW)


async def cancel(session, task_id: str) -> dict[str, Any]:
    return await session.send_request(_CancelTask(params=_TaskParams(task_id=task_id)), _RAW)


async def update(session, task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    params = _UpdateParams(task_id=task_id, input_responses=responses)
    return await session.send_request(_UpdateTask(params=params), _RAW)


async def wait_for(session, task_id: str, *statuses: str, limit_seconds: float = 60) -> dict[str, Any]:
    """Poll tasks/get at the task's pollIntervalMs until it is in one of ``statuses`` or has ended."""
    with anyio.fail_after(limit_seconds):
        while True:
            task = await get(session, task_id)
            if task["status"] in statuses or task["status"] in TERMINAL:
                return task
            await anyio.sleep(task.get("pollIntervalMs", 500) / 1000)


async def _resolve(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    task = await wait_for(ctx.session, created.task_id)
    if task["status"] != "completed":
        raise RuntimeError(f"task {created.task_id} ended {task['status']}: {task.get('error')}")
    return types.CallToolResult.model_validate(task["result"])


class TasksClient(ClientExtension):
    identifier = EXTENSION

    def claims(self):
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve),)
