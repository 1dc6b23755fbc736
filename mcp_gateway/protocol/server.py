"""The low-level MCP server: tools/list and tools/call for the caller of each request."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import mcp.types as types
from django.conf import settings
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions

from apps_runtime.screens import SCREEN_MIME_TYPE, UI_EXTENSION
from mcp_gateway.mcp_tasks.extension import EXTENSION as TASKS_EXTENSION
from mcp_gateway.protocol import log_levels
from mcp_gateway.protocol.asking import RememberClientKinds, answered, prompt_answer, request_state_boundary
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import call_context, gateway_request, served
from mcp_gateway.protocol.errors import jsonrpc_errors
from mcp_gateway.protocol.list_pages import ListPages
from mcp_gateway.protocol.notifications import PROMPTS, RESOURCES, Notifier
from mcp_gateway.protocol.progress_relay import relayed
from mcp_gateway.protocol.spans import RequestSpans
from mcp_gateway.protocol.tasks import CAPABILITY as TASKS_CAPABILITY
from mcp_gateway.protocol.tasks import register_task_methods
from mcp_gateway.sdk_seams import OpenTelemetryMiddleware
from mcp_gateway.tools.call import calls as tool_calls
from mcp_gateway.tools.catalog.catalog import cached_catalog
from mcp_gateway.tools.completion import completion
from mcp_gateway.tools.prompts import prompts
from mcp_gateway.tools.resources import resources
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("mcp_gateway.protocol.server")
# MCP Apps: tools may show screens (``_meta.ui.resourceUri``), served as ui:// resources.
EXTENSIONS = {UI_EXTENSION: {"mimeTypes": [SCREEN_MIME_TYPE]}}


class GatewayServer(Server):
    """Advertises listChanged (tools, resources, prompts), which the SDK leaves off by default, and tasks."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True),
            experimental_capabilities,
            extensions,
        )
        options.capabilities.tasks = TASKS_CAPABILITY  # tasks/* are served by task_methods.py
        # 2025-11-25 has no ``extensions`` capability (the SDK drops it on that wire): MCP Apps goes
        # under ``experimental`` there too, where hosts of that era look.
        options.capabilities.experimental = {**(options.capabilities.experimental or {}), **EXTENSIONS}
        return options


async def _listed(
    ctx: ServerRequestContext,
    params: types.PaginatedRequestParams | None,
    list_page: Callable[[Tenant, Caller, str | None], Any],
    notifier: Notifier,
    kind: str,
) -> Any:
    gw = gateway_request(ctx)
    result = await in_thread(list_page, gw.tenant, gw.caller, params.cursor if params else None)
    await notifier.watch(ctx, gw, kind)
    return result


def build_server(notifier: Notifier) -> GatewayServer:
    @jsonrpc_errors
    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        call = call_context(ctx)
        cursor = params.cursor if params else None
        listing = functools.partial(tool_calls.list_tools, ui_host=call.ui_host)
        result = await in_thread(listing, call.tenant, call.caller, cursor)
        await notifier.watch(ctx, gateway_request(ctx))
        return result

    @jsonrpc_errors
    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> Any:
        # The handler's progress and log lines reach the caller, if it wants them.
        async with relayed(ctx, params.name) as events:
            call = call_context(ctx, events=events)  # once: everything below gets it
            run = functools.partial(tool_calls.run_call, call, params.name, params.arguments)
            return await answered(ctx, call, params, run)  # one crossing, unless the call asks

    @jsonrpc_errors
    async def list_resources(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await _listed(ctx, params, resources.list_resources, notifier, RESOURCES)

    @jsonrpc_errors
    async def list_resource_templates(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return await _listed(ctx, params, resources.list_templates, notifier, RESOURCES)

    @jsonrpc_errors
    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await in_thread(resources.read_resource, call_context(ctx), str(params.uri))

    @jsonrpc_errors
    async def subscribe_resource(
        ctx: ServerRequestContext, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        await notifier.subscribe(ctx, gateway_request(ctx), str(params.uri))
        return types.EmptyResult()

    @jsonrpc_errors
    async def unsubscribe_resource(
        ctx: ServerRequestContext, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        notifier.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    @jsonrpc_errors
    async def list_prompts(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return await _listed(ctx, params, prompts.list_prompts, notifier, PROMPTS)

    @jsonrpc_errors
    async def get_prompt(
        ctx: ServerRequestContext, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        return await prompt_answer(ctx, call_context(ctx), params)

    @jsonrpc_errors
    async def complete(
        ctx: ServerRequestContext, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        context = params.context.arguments if params.context is not None else None
        return await in_thread(completion.complete, call_context(ctx), params.ref, params.argument, context)

    def input_schema(name: str) -> dict | None:
        """The caller's view of a tool's inputSchema, from the cached catalog (no I/O here)."""
        gw = served.get()
        if gw is None:
            return None
        catalog = cached_catalog(gw.tenant)
        entry = catalog.by_name.get(name) if catalog is not None else None
        return entry.tool.input_schema if entry is not None and entry.visible_to(gw.caller) else None

    server = GatewayServer(
        "lowcode-platform",
        get_tool_input_schema=input_schema,
        version="0.1.0",
        instructions="Tools of this workspace's apps, and its records. Each tool runs with your permissions.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe_resource,
        on_unsubscribe_resource=unsubscribe_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_subscriptions_listen=jsonrpc_errors(notifier.listen_handler),
    )
    server.extensions.update(EXTENSIONS)  # both eras' capabilities and server/discover read it
    # 2026-07-28 tasks (SEP-2663); 2025-11-25 sessions are offered the core ``tasks`` capability instead.
    server.extensions[TASKS_EXTENSION] = {}
    if not settings.MCP_OPENTELEMETRY or settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        # The SDK wraps every message in a span even with no exporter set up: 0.1-0.3 ms of CPU a call.
        # With traces exported, RequestSpans is the request's span (with the tenant and the app).
        server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    server.middleware.append(RequestSpans())  # first: a request's CallContext is built inside its span
    server.middleware.append(ListPages(notifier))
    register_task_methods(server, jsonrpc_errors)
    # Declares the logging capability (handshake era); registered after construction, where the SDK
    # would warn that 2026-07-28 dropped it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, log_levels.set_level)
    server.middleware.append(RememberClientKinds())
    server.middleware.append(request_state_boundary())
    return server
