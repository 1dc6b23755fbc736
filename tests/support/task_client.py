"""MCP task requests through the official SDK client (2025-11-25), which has types but no helpers.

``ClientSession.send_request`` sends any request and checks the result against the negotiated
version's schema where it knows the method; ``tasks/*`` it does not know, so their raw results are
parsed here.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from pydantic import TypeAdapter

_RAW = TypeAdapter(dict[str, Any])


async def send(client, request) -> dict[str, Any]:
    """Send ``request`` and return the raw result."""
    return await client.session.send_request(request, _RAW)


async def create_task(client, name: str, arguments: dict, ttl: int | None = None) -> types.CreateTaskResult:
    """A task-augmented tools/call, answered with the task."""
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=ttl))
    )
    return types.CreateTaskResult.model_validate(await send(client, request))


async def get_task(client, task_id: str) -> types.GetTaskResult:
    return types.GetTaskResult.model_validate(
        await send(client, types.GetTaskRequest(params={"taskId": task_id}))
    )


async def list_tasks(client, cursor: str | None = None) -> types.ListTasksResult:
    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
    return types.ListTasksResult.model_validate(await send(client, types.ListTasksRequest(params=params)))


async def wait_until_finished(client, task_id: str, *, limit_seconds: float = 60) -> types.GetTaskResult:
    """Poll tasks/get at the task's pollInterval until it ends (a test fails past ``limit_seconds``)."""
    with anyio.fail_after(limit_seconds):
        while True:
            task = await get_task(client, task_id)
            if task.status in ("completed", "failed", "cancelled"):
                return task
            await anyio.sleep((task.poll_interval or 500) / 1000)
