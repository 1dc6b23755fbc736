"""Server middleware: the request's ``_meta`` trace context, for everything that serves it (``tracing``)."""

from __future__ import annotations

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

from mcp_gateway.tools.tracing import call_traceparent, traceparent_of


class TraceContext:
    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        token = call_traceparent.set(traceparent_of(ctx.params))
        try:
            return await call_next(ctx)
        finally:
            call_traceparent.reset(token)
