"""The request an MCP handler serves: the tenant and caller the transport authenticated, and
whether the POST being served is answered with an event stream.

The transport sets both (``transport.app`` puts the ``GatewayRequest`` on the ASGI scope,
``transport.in_process`` binds one to a whole in-process connection,
``transport.streaming`` decides the stream per POST); the protocol layer only reads them, so it
never imports the transport.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from tenants.callers import Caller
from tenants.models import Tenant

GATEWAY_SCOPE_KEY = "lcp.gateway"
# The request being served, for SDK hooks that get no request context (get_tool_input_schema).
current_request: ContextVar[GatewayRequest | None] = ContextVar("lcp_gateway_request", default=None)

# The caller of a whole in-process connection (``transport.in_process``), which has no HTTP request
# to carry one. The HTTP transport never sets it, so a request without a scope still fails closed.
connection_request: ContextVar[GatewayRequest | None] = ContextVar("lcp_connection_request", default=None)

# Whether the POST being served is answered with an event stream. None where no POST decided
# (the session's message router); the transport sets False or True for the POSTs it serves.
streamed_var: ContextVar[bool | None] = ContextVar("lcp_mcp_streamed", default=None)


@dataclass(frozen=True)
class GatewayRequest:
    """The tenant (loaded fresh for this HTTP request) and the caller it authenticated."""

    tenant: Tenant
    caller: Caller


def authenticated(ctx: ServerRequestContext) -> GatewayRequest | None:
    """The tenant and caller ``ctx`` is served for: off the ASGI scope (``transport.app`` puts it
    there), or, without an HTTP request, the in-process connection's; None if neither."""
    request = ctx.request
    if request is not None:
        return request.scope.get(GATEWAY_SCOPE_KEY)
    return connection_request.get()


def gateway_request(ctx: ServerRequestContext) -> GatewayRequest:
    """The authenticated request an MCP handler serves (``authenticated``), or -32600."""
    found = authenticated(ctx)
    if found is None:  # only reachable if the server were mounted without the auth layer
        raise MCPError(types.INVALID_REQUEST, "Not authenticated")
    return found


def streamed() -> bool:
    """Whether the request being served has an event stream: progress and logs can reach its caller."""
    return bool(streamed_var.get())
