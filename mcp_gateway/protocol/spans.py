"""Server middleware: one SERVER span per MCP request, by the MCP semantic conventions.

Named ``<mcp.method.name> <target>`` (the tool's or prompt's name; a resource URI is an argument
and stays out), with ``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id``,
``jsonrpc.request.id``, ``gen_ai.tool.name`` and ``gen_ai.operation.name`` for tools/call,
``error.type`` on failure, and ``lcp.tenant`` (the tools layer adds ``lcp.app``, ``lcp.app.version``).
Its parent is the request's ``params._meta.traceparent``, else its ``traceparent`` header.
Off (``core.tracing``), a request passes straight through.
"""

from __future__ import annotations

from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from opentelemetry.trace import SpanKind

from core import tracing
from mcp_gateway.protocol.context import authenticated
from mcp_gateway.tools.pipeline.tracing import traceparent_of

_NAMED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}


class RequestSpans:
    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        if not tracing.enabled():
            return await call_next(ctx)
        name, attributes = _described(ctx)
        with tracing.span(name, attributes, kind=SpanKind.SERVER, parent=_parent(ctx)) as span:
            try:
                result = await call_next(ctx)
            except MCPError as err:
                tracing.failed(span, str(err.error.code))
                raise
            if _is_tool_error(result):
                tracing.failed(span, "tool_error")
            return result


def _is_tool_error(result: Any) -> bool:
    """A tools/call answered ``isError`` (as a model or, from some handlers, a raw dict)."""
    if isinstance(result, dict):
        return result.get("isError") is True
    return isinstance(result, CallToolResult) and result.is_error is True


def _described(ctx: ServerRequestContext) -> tuple[str, dict[str, Any]]:
    """The span's name and attributes (names only: never an argument, a URI or a cursor)."""
    attributes: dict[str, Any] = {"mcp.method.name": ctx.method}
    if ctx.protocol_version:
        attributes["mcp.protocol.version"] = ctx.protocol_version
    if ctx.request_id is not None:
        attributes["jsonrpc.request.id"] = str(ctx.request_id)
    session = ctx.request.headers.get("mcp-session-id") if ctx.request is not None else None
    if session:
        attributes["mcp.session.id"] = session
    served = authenticated(ctx)
    if served is not None:
        attributes["lcp.tenant"] = served.tenant.slug
    target = ctx.params.get("name") if ctx.params else None
    if ctx.method in _NAMED and isinstance(target, str):
        attributes[_NAMED[ctx.method]] = target
        if ctx.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
        return f"{ctx.method} {target}", attributes
    return ctx.method, attributes


def _parent(ctx: ServerRequestContext) -> str | None:
    """The client's trace context: ``params._meta.traceparent``, else the HTTP ``traceparent`` header."""
    found = traceparent_of(ctx.params)
    if found is None and ctx.request is not None:
        found = traceparent_of({"_meta": {"traceparent": ctx.request.headers.get("traceparent")}})
    return found
