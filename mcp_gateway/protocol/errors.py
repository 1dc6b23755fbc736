"""The one mapping from the gateway's errors to JSON-RPC errors, for every MCP method.

Handlers raise domain errors (``mcp_gateway.exceptions``); ``jsonrpc_errors`` wraps each handler and
turns them into the ``MCPError`` the SDK puts on the wire. Anything unexpected becomes -32603 with
an error id: the SDK would otherwise send the exception's text (database errors, RecursionError)
with code 0 on the handshake-era transport.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from core.error_ids import new_error_id
from mcp_gateway.exceptions import (
    HeaderMismatch,
    InternalError,
    InvalidCursor,
    MethodNotInThisEra,
    MissingClientCapability,
    NotAuthenticated,
    RequestRefused,
    ResourceNotFound,
    RouteFailed,
    RouteRefused,
    TaskFinished,
    TaskModeRefused,
    TaskNotFound,
    Unavailable,
)
from mcp_gateway.tools.pipeline.asks import AnswersRefused

logger = logging.getLogger("mcp_gateway.protocol")

Handler = Callable[[ServerRequestContext, Any], Awaitable[Any]]

RESOURCE_NOT_FOUND_LEGACY = -32002  # the 2025-11-25 revision's "Resource not found"

# Each gateway error's code, the first match winning (a subclass before its base). The refusals
# of the request itself (-32602): the caller named something that is not there (or not theirs),
# or sent answers to questions it was not asked.
_CODES: tuple[tuple[type[Exception] | tuple[type[Exception], ...], int], ...] = (
    (TaskModeRefused, types.METHOD_NOT_FOUND),  # as the spec asks of a task tool called wrongly
    (
        (Unavailable, RouteRefused, InvalidCursor, TaskNotFound, TaskFinished, AnswersRefused),
        types.INVALID_PARAMS,
    ),
    ((RouteFailed, InternalError), types.INTERNAL_ERROR),  # InternalError: logged where it was caught
    ((NotAuthenticated, RequestRefused), types.INVALID_REQUEST),
    (HeaderMismatch, types.HEADER_MISMATCH),
)


def jsonrpc_error(ctx: ServerRequestContext, err: Exception) -> MCPError | None:
    """The JSON-RPC error of a gateway error, or None for an exception the gateway did not expect."""
    if isinstance(err, MCPError):
        return err
    if isinstance(err, ResourceNotFound):
        # The spec's resource-not-found error: -32602 from 2026-07-28 on, -32002 before.
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        code = types.INVALID_PARAMS if modern else RESOURCE_NOT_FOUND_LEGACY
        return MCPError(code, str(err), {"uri": err.uri[:300]})
    return rpc_error(err)


def rpc_error(err: Exception) -> MCPError | None:
    """``jsonrpc_error`` for the errors whose code is the same in every protocol era (all but
    ``ResourceNotFound``); None for an exception the gateway did not expect."""
    if isinstance(err, MCPError):
        return err
    if isinstance(err, MethodNotInThisEra):
        return MCPError(types.METHOD_NOT_FOUND, str(err), err.method)
    if isinstance(err, MissingClientCapability):
        data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=err.required)
        return MCPError(
            types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            str(err),
            data.model_dump(by_alias=True, mode="json", exclude_none=True),
        )
    for kinds, code in _CODES:
        if isinstance(err, kinds):
            return MCPError(code, str(err))
    return None


def refusal(err: Exception) -> MCPError:
    """``rpc_error`` of an error raised where no handler's guard maps it (a middleware, an SDK hook).

    Raises:
        TypeError: ``err`` is not a gateway error with a code (a bug: every such error has one).
    """
    mapped = rpc_error(err)
    if mapped is None:
        raise TypeError(f"{type(err).__name__} has no JSON-RPC code in protocol.errors") from err
    return mapped


def jsonrpc_errors(handler: Handler) -> Handler:
    """``handler`` with its errors answered as JSON-RPC errors (``jsonrpc_error``), never as text."""

    @functools.wraps(handler)
    async def guarded(ctx: ServerRequestContext, params: Any) -> Any:
        try:
            return await handler(ctx, params)
        except Exception as err:  # the top of a request: nothing unexpected reaches the wire as text
            mapped = jsonrpc_error(ctx, err)
            if mapped is err:
                raise
            if mapped is not None:
                raise mapped from err
            error_id = new_error_id()
            logger.exception("MCP %s failed: error_id=%s", ctx.method, error_id)
            raise MCPError(types.INTERNAL_ERROR, str(InternalError(error_id))) from err

    return guarded
