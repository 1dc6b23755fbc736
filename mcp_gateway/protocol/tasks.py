"""MCP tasks on the wire (protocol 2025-11-25): task-augmented ``tools/call`` and ``tasks/*``.

SDK 2.3 defines the task types but routes none of it, so the gateway does:

- ``TaskCalls`` (server middleware) answers a ``tools/call`` carrying ``params.task`` with a
  ``CreateTaskResult``. It must answer before the SDK's result check, which knows only
  ``CallToolResult`` for ``tools/call`` and would drop the ``task`` member.
- ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` are request handlers.

On 2026-07-28 (where tasks left the core protocol for an extension the SDK does not implement) a
``tools/call`` has no ``task`` member: optional task tools run synchronously there, and required ones
are refused (``task_modes.py``). The ``tasks/*`` methods answer on either era.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from django.conf import settings
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_gateway.mcp_tasks import calls as task_calls
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import gateway_request
from mcp_gateway.protocol.elicitation import confirm_call
from mcp_gateway.protocol.errors import jsonrpc_error
from mcp_gateway.protocol.list_pages import sdk_would_serve
from mcp_gateway.tools.links import remember_call_origin

CAPABILITY = types.ServerTasksCapability(
    list=types.TasksListCapability(),
    cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(
        tools=types.TasksToolsCapability(call=types.TasksCallCapability())
    ),
)
# Between two reads of a task that tasks/result waits on.
RESULT_POLL_SECONDS = 0.5


class TaskCalls:
    """Server middleware: a task-augmented tools/call creates a task and is answered with it."""

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if (
            ctx.method != "tools/call"
            or ctx.request_id is None
            or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            or not isinstance(params, dict)
            or params.get("task") is None
            or not sdk_would_serve(ctx, "tools/call")
        ):
            return await call_next(ctx)
        call = types.CallToolRequestParams.model_validate(params, by_name=False)
        gw = gateway_request(ctx)
        remember_call_origin(ctx.request.scope if ctx.request is not None else None)  # the task keeps it
        ttl = call.task.ttl if call.task is not None else None
        try:
            confirmation = await confirm_call(ctx, gw, call)  # handshake era: never input-required
            return await in_thread(
                task_calls.create_task, gw.tenant, gw.caller, call.name, call.arguments, ttl, confirmation
            )
        except Exception as err:  # a middleware, outside the handlers' guard: the same mapping
            mapped = jsonrpc_error(ctx, err)
            if mapped is None or mapped is err:
                raise
            raise mapped from err


async def _get(ctx: ServerRequestContext, params: types.GetTaskRequestParams) -> types.GetTaskResult:
    gw = gateway_request(ctx)
    return await in_thread(task_calls.get_task, gw.tenant, gw.caller, params.task_id)


async def _list(ctx: ServerRequestContext, params: types.PaginatedRequestParams) -> types.ListTasksResult:
    gw = gateway_request(ctx)
    return await in_thread(task_calls.list_tasks, gw.tenant, gw.caller, params.cursor)


async def _cancel(ctx: ServerRequestContext, params: types.CancelTaskRequestParams) -> types.CancelTaskResult:
    gw = gateway_request(ctx)
    return await in_thread(task_calls.cancel_task, gw.tenant, gw.caller, params.task_id)


async def _result(ctx: ServerRequestContext, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
    """The task's tools/call result once it has ended, waiting for that at most TASK_RESULT_WAIT_SECONDS."""
    gw = gateway_request(ctx)
    waited, limit = 0.0, settings.TASK_RESULT_WAIT_SECONDS
    while True:
        payload = await in_thread(task_calls.task_payload, gw.tenant, gw.caller, params.task_id)
        if payload is not None:
            return payload
        if waited >= limit:
            raise MCPError(
                types.INVALID_REQUEST,
                f"Task {params.task_id} is still working after {limit:g} s: poll tasks/get, and call "
                "tasks/result again once it has ended",
            )
        await anyio.sleep(RESULT_POLL_SECONDS)
        waited += RESULT_POLL_SECONDS


def register_task_methods(server: Server, guard: Callable[[Any], Any]) -> None:
    """Serve tasks/* on ``server``, each handler wrapped in ``guard`` (the server's error mapping)."""
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, guard(_get))
    server.add_request_handler("tasks/list", types.PaginatedRequestParams, guard(_list))
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, guard(_cancel))
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, guard(_result))
    server.middleware.append(TaskCalls())
