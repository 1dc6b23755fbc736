"""A request's W3C trace context (``_meta.traceparent``) reaches the audit row and the handler."""

from __future__ import annotations

import anyio
import pytest

from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import _tool

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"
MANIFEST = {
    "name": "tracer",
    "routes": {"POST /echo": {"handler": "server/echo.py", "auth": "user"}},
    "mcp": {"tools": [_tool("echo", "POST /echo")]},
}
HANDLER = "def handle(request):\n    return {'traceparent': request.traceparent}\n"


@pytest.fixture
def token(mcp_url, acme, deploy, make_token):
    deploy(acme, MANIFEST, {"server/echo.py": HANDLER})
    return make_token(acme, "member")[1]


def call(url, token, mode, meta):
    async def main():
        async with mcp_client(url, token, mode=mode) as client:
            return await client.call_tool("acme_tracer_echo", {}, meta=meta)

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_trace_context_reaches_the_handler_and_the_audit_row(mcp_url, token, acme, mode):
    result = call(mcp_url(), token, mode, {"traceparent": TRACEPARENT})

    assert result.structured_content == {"traceparent": TRACEPARENT}
    assert ToolCallAudit.objects.for_tenant(acme).get().trace_id == TRACE


@pytest.mark.parametrize(
    "value", ["01-" + TRACEPARENT[3:], f"00-{'0' * 32}-00f067aa0ba902b7-01", "x" * 55, 42]
)
def test_a_malformed_trace_context_is_dropped(mcp_url, token, acme, value):
    result = call(mcp_url(), token, "2026-07-28", {"traceparent": value})

    assert result.structured_content == {"traceparent": None}
    assert ToolCallAudit.objects.for_tenant(acme).get().trace_id == ""
