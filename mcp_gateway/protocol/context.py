"""The request an MCP handler serves: its tenant and caller, and the ``CallContext`` built from it.

The caller is read in one place, ``authenticated``: off the ASGI scope's ``user`` (the SDK's
``AuthenticatedUser``, whose access token carries the ``GatewayRequest`` the transport
authenticated), or, for an in-process connection, which has no HTTP request, the connection's.
Every handler builds its ``CallContext`` once (``call_context``) and passes it down.

Two context variables remain in the gateway, each where the SDK gives no hook: ``served`` here
(the SDK's ``get_tool_input_schema`` gets no request context; the same value charges each worker
thread crossing to its tenant and carries an in-process connection's caller) and ``streamed_var``,
which the transport sets per POST (the SDK reads its JSON-or-stream flag at fixed points with no
request at hand; ``transport.streaming``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp.server import ServerRequestContext

from core.origin import scope_origin
from mcp_gateway.exceptions import NotAuthenticated
from mcp_gateway.protocol.errors import refusal
from mcp_gateway.protocol.log_levels import session_id
from mcp_gateway.tools.pipeline.call_context import CallContext
from tenants.callers import Caller
from tenants.models import Tenant

# The request (or in-process connection) being served: for SDK hooks that get no request context
# (get_tool_input_schema), the tenant charge of ``concurrency.in_thread``, and the caller of an
# in-process connection. Set by the transport (``serving``).
served: ContextVar[GatewayRequest | None] = ContextVar("lcp_gateway_served", default=None)

# Whether the POST being served is answered with an event stream. None where no POST decided
# (the session's message router); the transport (``streaming``) sets False or True for its POSTs.
streamed_var: ContextVar[bool | None] = ContextVar("lcp_mcp_streamed", default=None)


@dataclass(frozen=True)
class GatewayRequest:
    """The tenant (loaded fresh for this HTTP request) and the caller it authenticated.

    ``connection``: the caller of a whole in-process connection (``transport.in_process``), which
    has no HTTP request to carry one.
    """

    tenant: Tenant
    caller: Caller
    connection: bool = False


@contextmanager
def serving(gw: GatewayRequest) -> Iterator[None]:
    """Serve ``gw`` in this block (and the tasks it starts): the transport's one hand-over."""
    token = served.set(gw)
    try:
        yield
    finally:
        served.reset(token)


def scope_caller(scope: Mapping[str, Any]) -> GatewayRequest | None:
    """The ``GatewayRequest`` on an authenticated ASGI scope: its ``user``'s access token carries it
    (the SDK's ``AuthenticatedUser``, as the transport's ``authenticate`` sets it)."""
    token = getattr(scope.get("user"), "access_token", None)
    return getattr(token, "gateway", None)


def authenticated(ctx: Any) -> GatewayRequest | None:
    """The tenant and caller ``ctx`` is served for: off the ASGI scope's ``user`` (the transport's
    ``authenticate`` puts it there), or, without an HTTP request, the in-process connection's;
    None if neither (a request without a scope fails closed)."""
    request = ctx.request
    if request is not None:
        return scope_caller(request.scope)
    found = served.get()
    return found if found is not None and found.connection else None


def gateway_request(ctx: ServerRequestContext) -> GatewayRequest:
    """The authenticated request an MCP handler serves (``authenticated``), or -32600."""
    found = authenticated(ctx)
    if found is None:  # only reachable if the server were mounted without the auth layer
        raise refusal(NotAuthenticated())  # mapped here: middlewares call this outside a handler's guard
    return found


def call_context(ctx: ServerRequestContext, *, events: Any = None) -> CallContext:
    """The ``CallContext`` of the request ``ctx``: built once per request, at the protocol edge.

    Raises:
        MCPError: -32600 without an authenticated caller (``gateway_request``).
    """
    gw = gateway_request(ctx)
    session = getattr(ctx, "session", None)
    request = ctx.request
    return CallContext.for_request(
        gw.tenant,
        gw.caller,
        origin=scope_origin(request.scope) if request is not None else None,
        protocol_version=ctx.protocol_version,
        capabilities=session.client_capabilities if session is not None else None,
        params=ctx.params,
        events=events,
        session_id=session_id(ctx),
    )


def streamed() -> bool:
    """Whether the request being served has an event stream: progress and logs can reach its caller."""
    return bool(streamed_var.get())
