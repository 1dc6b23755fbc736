"""MCP tasks on the wire, in both eras: task-augmented ``tools/call`` and ``tasks/*``.

SDK 2.3 defines the 2025-11-25 task types but routes none of it, and has nothing of the 2026-07-28
tasks extension, so the gateway does:

- ``TaskCalls`` (server middleware) answers a ``tools/call`` that creates a task before the SDK's
  result check, which knows only ``CallToolResult`` for ``tools/call``.
- 2025-11-25 (core tasks): a call carrying ``params.task`` creates one; ``tasks/get``,
  ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` serve it (``mcp_tasks/calls.py``).
- 2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension, ``mcp_tasks/extension.py``): the
  server decides. A request whose ``_meta`` client capabilities declare the extension gets a task
  for a call of a task tool (and a sync-only tool's call stays synchronous, ``task`` param or
  not); one that does not gets the result synchronously for an ``optional`` tool and -32021 for a
  ``required`` one. ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` need the extension
  declared (-32021), and ``tasks/result`` and ``tasks/list`` are not methods of that era (-32601).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from django.conf import settings
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_gateway.exceptions import HeaderMismatch, MethodNotInThisEra, MissingClientCapability, RequestRefused
from mcp_gateway.mcp_tasks import calls as task_calls
from mcp_gateway.mcp_tasks import extension as task_extension
from mcp_gateway.mcp_tasks.extension import EXTENSION
from mcp_gateway.protocol.asking import answered
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import call_context, gateway_request
from mcp_gateway.protocol.errors import jsonrpc_error, refusal
from mcp_gateway.protocol.list_pages import sdk_would_serve
from mcp_gateway.tools.call.confirmation import Confirmation
from mcp_gateway.tools.call.modes import REQUIRED

CAPABILITY = types.ServerTasksCapability(
    list=types.TasksListCapability(),
    cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(
        tools=types.TasksToolsCapability(call=types.TasksCallCapability())
    ),
)
# Between two reads of a task that tasks/result waits on.
RESULT_POLL_SECONDS = 0.5


class UpdateTaskRequestParams(types.GetTaskRequestParams):
    """``tasks/update`` (the 2026-07-28 extension): the caller's answers to its task's questions."""

    input_responses: dict[str, Any] = {}


def _modern(ctx: ServerRequestContext) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def declares_extension(ctx: ServerRequestContext) -> bool:
    """Whether this 2026-07-28 request's client capabilities declare the tasks extension."""
    declared = ctx.session.client_capabilities
    return declared is not None and EXTENSION in (declared.extensions or {})


def _extension_required(what: str) -> MissingClientCapability:
    return MissingClientCapability(
        f"{what} needs the {EXTENSION} extension, which this request's client capabilities do not declare",
        types.ClientCapabilities(extensions={EXTENSION: {}}),
    )


def _require_extension(ctx: ServerRequestContext) -> None:
    if not declares_extension(ctx):
        raise _extension_required(ctx.method)


def _not_in_this_era(ctx: ServerRequestContext) -> MethodNotInThisEra:
    return MethodNotInThisEra(ctx.method)


class TaskNameHeader:
    """Middleware: a 2026-07-28 ``tasks/*`` request whose ``Mcp-Name`` header names another task
    than its ``taskId`` is -32020, as the SDK answers a mismatched header on the core methods.

    The extension has clients mirror ``taskId`` into ``Mcp-Name`` for routing intermediaries; one
    that sends no header is still served (the SDK's client sends none for methods it does not know).
    """

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        if ctx.method in _NAMED_BY_TASK and _modern(ctx) and ctx.request is not None:
            header = decode_header_value(ctx.request.headers.get(MCP_NAME_HEADER))
            task_id = ctx.params.get("taskId") if isinstance(ctx.params, dict) else None
            if header is not None and header != task_id:
                message = f"{MCP_NAME_HEADER} header does not match params.taskId"
                raise refusal(HeaderMismatch(message))  # a middleware: outside any handler's guard
        return await call_next(ctx)


_NAMED_BY_TASK = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


class TaskCalls:
    """Server middleware: a tools/call that creates a task is answered with it (see the module)."""

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if (
            ctx.method != "tools/call"
            or ctx.request_id is None
            or not isinstance(params, dict)
            or (params.get("task") is None and not _modern(ctx))
            or not sdk_would_serve(ctx, "tools/call")
        ):
            return await call_next(ctx)
        try:
            if _modern(ctx):
                return await self._modern(ctx, call_next, params)
            return await self._handshake_era(ctx, params)
        except Exception as err:  # a middleware, outside the handlers' guard: the same mapping
            mapped = jsonrpc_error(ctx, err)
            if mapped is None or mapped is err:
                raise
            raise mapped from err

    async def _handshake_era(self, ctx: ServerRequestContext, params: dict) -> HandlerResult:
        request = types.CallToolRequestParams.model_validate(params, by_name=False)
        # Its client answers nothing while the task runs: tasks/update is the 2026-07-28 extension's.
        call = call_context(ctx).replace(can_ask=())
        ttl = request.task.ttl if request.task is not None else None

        def create(confirmation: Confirmation | None, _answers: dict) -> Any:
            return task_calls.create_task(call, request.name, request.arguments, ttl, confirmation)

        return await answered(ctx, call, request, create)  # a confirm tool is confirmed on the stream first

    async def _modern(self, ctx: ServerRequestContext, call_next: CallNext, params: dict) -> HandlerResult:
        call = call_context(ctx)
        mode = await in_thread(task_extension.task_mode, call, params.get("name"))
        if mode is None:
            return await call_next(ctx)  # not a task tool: a legacy ``task`` param changes nothing
        if not declares_extension(ctx):
            if mode == REQUIRED:
                raise _extension_required(f"Tool {params.get('name')} runs only as a task: it")
            return await call_next(ctx)  # optional: the result, synchronously
        request = types.CallToolRequestParams.model_validate(params, by_name=False)

        def create(confirmation: Confirmation | None, _answers: dict) -> Any:
            return task_extension.create_task(call, request.name, request.arguments, confirmation)

        # A confirm tool: the user confirms first (an input round), then the task is created.
        return await answered(ctx, call, request, create)


async def _get(ctx: ServerRequestContext, params: types.GetTaskRequestParams) -> Any:
    gw = gateway_request(ctx)
    if _modern(ctx):
        _require_extension(ctx)
        return await in_thread(task_extension.get_task, gw.tenant, gw.caller, params.task_id)
    return await in_thread(task_calls.get_task, gw.tenant, gw.caller, params.task_id)


async def _list(ctx: ServerRequestContext, params: types.PaginatedRequestParams) -> types.ListTasksResult:
    if _modern(ctx):
        raise _not_in_this_era(ctx)  # the extension has no tasks/list
    gw = gateway_request(ctx)
    return await in_thread(task_calls.list_tasks, gw.tenant, gw.caller, params.cursor)


async def _cancel(ctx: ServerRequestContext, params: types.CancelTaskRequestParams) -> Any:
    gw = gateway_request(ctx)
    if _modern(ctx):
        _require_extension(ctx)
        return await in_thread(task_extension.cancel_task, gw.tenant, gw.caller, params.task_id)
    return await in_thread(task_calls.cancel_task, gw.tenant, gw.caller, params.task_id)


async def _update(ctx: ServerRequestContext, params: UpdateTaskRequestParams) -> dict[str, Any]:
    if not _modern(ctx):
        raise _not_in_this_era(ctx)  # core tasks of 2025-11-25 take no input
    _require_extension(ctx)
    gw = gateway_request(ctx)
    return await in_thread(
        task_extension.update_task, gw.tenant, gw.caller, params.task_id, params.input_responses
    )


async def _result(ctx: ServerRequestContext, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
    """The task's tools/call result once it has ended, waiting for that at most TASK_RESULT_WAIT_SECONDS."""
    if _modern(ctx):
        raise _not_in_this_era(ctx)  # the extension inlines the result on tasks/get
    gw = gateway_request(ctx)
    waited, limit = 0.0, settings.TASK_RESULT_WAIT_SECONDS
    while True:
        payload = await in_thread(task_calls.task_payload, gw.tenant, gw.caller, params.task_id)
        if payload is not None:
            return payload
        if waited >= limit:
            raise RequestRefused(
                f"Task {params.task_id} is still working after {limit:g} s: poll tasks/get, and call "
                "tasks/result again once it has ended"
            )
        await anyio.sleep(RESULT_POLL_SECONDS)
        waited += RESULT_POLL_SECONDS


def register_task_methods(server: Server, guard: Callable[[Any], Any]) -> None:
    """Serve tasks/* on ``server``, each handler wrapped in ``guard`` (the server's error mapping)."""
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, guard(_get))
    server.add_request_handler("tasks/list", types.PaginatedRequestParams, guard(_list))
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, guard(_cancel))
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, guard(_result))
    server.add_request_handler("tasks/update", UpdateTaskRequestParams, guard(_update))
    server.middleware.append(TaskNameHeader())
    server.middleware.append(TaskCalls())
