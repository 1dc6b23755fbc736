"""``protocol.errors``: the one table from the gateway's errors to JSON-RPC error codes."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    RootsCapability,
)

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
    ToolUnavailable,
)
from mcp_gateway.protocol.errors import jsonrpc_error, jsonrpc_errors
from mcp_gateway.tools.pipeline.asks import AnswersRefused

MODERN = SimpleNamespace(protocol_version="2026-07-28", method="tools/call")
LEGACY = SimpleNamespace(protocol_version="2025-11-25", method="tools/call")


@pytest.mark.parametrize(
    ("err", "code"),
    [
        (ToolUnavailable("x"), INVALID_PARAMS),
        (TaskModeRefused("x", "needs a task"), METHOD_NOT_FOUND),
        (InvalidCursor(), INVALID_PARAMS),
        (TaskNotFound("t1"), INVALID_PARAMS),
        (TaskFinished("t1", "completed"), INVALID_PARAMS),
        (RouteRefused("no such case"), INVALID_PARAMS),
        (RouteFailed("The app's handler failed (error id err_01)"), INTERNAL_ERROR),
        (NotAuthenticated(), INVALID_REQUEST),
        (RequestRefused("The prompt cannot be made: it asks."), INVALID_REQUEST),
        (HeaderMismatch("Mcp-Name header does not match params.taskId"), HEADER_MISMATCH),
        (MethodNotInThisEra("tasks/list"), METHOD_NOT_FOUND),
        (InternalError("err_01"), INTERNAL_ERROR),
        (AnswersRefused("inputResponses: an answer to no question"), INVALID_PARAMS),
    ],
)
def test_each_gateway_error_has_one_code_on_either_era(err, code):
    for ctx in (MODERN, LEGACY):
        mapped = jsonrpc_error(ctx, err)
        assert (mapped.error.code, mapped.error.message) == (code, str(err))


def test_a_missing_client_capability_names_what_is_missing():
    err = MissingClientCapability("needs roots", ClientCapabilities(roots=RootsCapability()))
    mapped = jsonrpc_error(MODERN, err)
    assert (mapped.error.code, mapped.error.data) == (
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        {"requiredCapabilities": {"roots": {}}},
    )


def test_resource_not_found_takes_the_code_of_the_callers_era():
    err = ResourceNotFound("ui://cases/x")

    assert jsonrpc_error(MODERN, err).error.code == INVALID_PARAMS
    assert jsonrpc_error(LEGACY, err).error.code == -32002


def test_a_surprise_is_an_internal_error_with_only_an_error_id(caplog):
    async def handler(ctx, params):
        raise RuntimeError("password hunter2 at /srv/host")

    with pytest.raises(MCPError) as raised, caplog.at_level(logging.ERROR):
        anyio.run(jsonrpc_errors(handler), MODERN, None)

    assert raised.value.error.code == INTERNAL_ERROR
    assert "hunter2" not in raised.value.error.message and "error id err_" in raised.value.error.message
    assert raised.value.error.message.split("error id ")[1].rstrip(")") in caplog.text
