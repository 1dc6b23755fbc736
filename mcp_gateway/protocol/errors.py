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
    InternalError,
    InvalidCursor,
    ResourceNotFound,
    RouteAnswerRefused,
    TaskFinished,
    TaskNotFound,
    Unavailable,
)
from mcp_gateway.tools.asks import AnswersRefused

logger = logging.getLogger("mcp_gateway.protocol")

Handler = Callable[[ServerRequestContext, Any], Awaitable[Any]]

# Refusals of the request itself: the caller named something that is not there (or not theirs), or
# sent answers to questions it was not asked.
_INVALID_PARAMS = (InvalidCursor, TaskNotFound, TaskFinished, AnswersRefused)


def jsonrpc_error(ctx: ServerRequestContext, err: Exception) -> MCPError | None:
    """The JSON-RPC error of a gateway error, or None for an exception the gateway did not expect."""
    if isinstance(err, MCPError):
        return err
    if isinstance(err, ResourceNotFound):
        # The spec's resource-not-found error: -32602 from 2026-07-28 on, -32002 before.
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        return MCPError(err.code if modern else err.legacy_code, str(err), {"uri": err.uri[:300]})
    if isinstance(err, Unavailable | RouteAnswerRefused):
        return MCPError(err.code, str(err))
    if isinstance(err, _INVALID_PARAMS):
        return MCPError(types.INVALID_PARAMS, str(err))
    if isinstance(err, InternalError):  # already logged under its id where it was caught
        return MCPError(types.INTERNAL_ERROR, str(err))
    return None


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
