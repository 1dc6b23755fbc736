"""The builder endpoint's MCP server: the SDK's low-level ``Server`` with the builder's handlers.

Each handler reads the admin the transport authenticated (``BuilderRequest`` on the ASGI scope), runs
its operation in a thread (the ORM is synchronous) and answers. A refused operation is an ``isError``
result carrying its problems; an unknown tool or bad arguments are JSON-RPC -32602.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass

import mcp.types as types
from django.contrib.auth.models import AbstractBaseUser
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from apps_runtime.json_schemas import compile_schema
from builder import catalog
from builder.exceptions import BuilderError
from builder.operations import problem_lines
from builder.threads import in_thread
from core.error_ids import error_id_note, new_error_id
from tenants.models import Tenant

logger = logging.getLogger("builder.server")
BUILDER_SCOPE_KEY = "lcp.builder"
INSTRUCTIONS = (
    "Build this tenant's apps: validate_app, deploy_app, then preview_tools; diagnose failed calls with "
    f"list_errors and get_error; rollback_app undoes a deploy. Read {catalog.GUIDE_URI} first."
)


@dataclass(frozen=True)
class BuilderRequest:
    """The tenant and the tenant admin (a user account) an HTTP request was authenticated as."""

    tenant: Tenant
    user: AbstractBaseUser


def builder_request(ctx: ServerRequestContext) -> BuilderRequest:
    found = ctx.request.scope.get(BUILDER_SCOPE_KEY) if ctx.request is not None else None
    if found is None:  # only reachable if the server were mounted without the auth layer
        raise MCPError(types.INVALID_REQUEST, "Not authenticated")
    return found


@functools.cache
def _validator(name: str):
    return compile_schema(catalog.TOOLS[name].tool.input_schema)


async def list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    builder_request(ctx)
    return types.ListToolsResult(tools=[entry.tool for entry in catalog.TOOLS.values()])


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    found = builder_request(ctx)
    entry = catalog.TOOLS.get(params.name)
    if entry is None:
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
    arguments = params.arguments or {}
    errors = sorted(_validator(params.name).iter_errors(arguments), key=lambda e: list(map(str, e.path)))
    if errors:
        lines = [f"/{'/'.join(map(str, e.path))}: {e.message[:300]}" for e in errors[:20]]
        return _error_result(f"invalid arguments for {params.name}", {"problems": lines})
    try:
        result = await in_thread(entry.run, found.tenant, found.user, arguments, tenant_id=found.tenant.pk)
    except BuilderError as refused:
        return _error_result(refused.message, refused.details)
    except Exception as err:  # the top of a tool call: the caller gets an error id, the log the cause
        error_id = new_error_id()
        logger.exception("builder tool %s failed: error_id=%s", params.name, error_id)
        raise MCPError(types.INTERNAL_ERROR, f"Internal error {error_id_note(error_id)}.") from err
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


def _error_result(message: str, details: dict) -> types.CallToolResult:
    problems = details.get("problems") or []
    lines = problem_lines(problems) if problems and isinstance(problems[0], dict) else list(problems)
    warnings = [f"warning: {w}" for w in details.get("warnings") or []]
    text = "\n".join([f"{message}:", *lines, *warnings]) if lines or warnings else message
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=details, is_error=True
    )


async def list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    builder_request(ctx)
    return types.ListResourcesResult(resources=catalog.RESOURCES)


async def read_resource(
    ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    builder_request(ctx)
    found = catalog.resource_text(str(params.uri))
    if found is None:
        raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {params.uri}")
    mime_type, text = found
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime_type, text=text)]
    )


async def list_prompts(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    builder_request(ctx)
    return types.ListPromptsResult(prompts=[catalog.CREATE_PROMPT])


async def get_prompt(
    ctx: ServerRequestContext, params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    builder_request(ctx)
    if params.name != catalog.CREATE_PROMPT.name:
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
    purpose = (params.arguments or {}).get("purpose", "").strip()
    if not purpose:
        raise MCPError(types.INVALID_PARAMS, "Give the argument 'purpose': what the app should do")
    return catalog.create_prompt(purpose[:2000])


def build_server() -> Server:
    return Server(
        "lowcode-platform-builder",
        version="0.1.0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
