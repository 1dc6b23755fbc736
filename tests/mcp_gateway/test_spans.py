"""Traces by the MCP conventions: the request's span, the handler's and its records calls, the
audit write; the client's trace context is the parent; argument values never enter a span."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from core import tracing
from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{CLIENT_SPAN}-01"
DISTINCTIVE = "zq-argument-value-5521"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    yield exporter
    tracing.disable()


@pytest.fixture
def token(mcp_url, acme, deploy, make_token):
    deploy(acme)
    return make_token(acme, "reader")[1]


def call(url, token, name, arguments, meta=None):
    async def main():
        async with mcp_client(url, token) as client:
            return await client.call_tool(name, arguments, meta=meta)

    return anyio.run(main)


def every_value(finished) -> str:
    return " ".join(f"{s.name} {dict(s.attributes)} {s.status.description}" for s in finished)


def test_a_tool_call_is_a_server_span_with_the_handler_records_and_audit_under_it(mcp_url, token, spans):
    result = call(
        mcp_url(), token, "acme_cases_find_case", {"query": DISTINCTIVE}, {"traceparent": TRACEPARENT}
    )
    assert result.is_error is False
    finished = spans.get_finished_spans()
    by_name = {s.name: s for s in finished}
    server = by_name["tools/call acme_cases_find_case"]
    assert server.kind == SpanKind.SERVER
    assert server.context.trace_id == int(TRACE, 16) and server.parent.span_id == int(CLIENT_SPAN, 16)
    attributes = dict(server.attributes)
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "acme_cases_find_case"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["jsonrpc.request.id"] and attributes["mcp.protocol.version"]
    assert attributes["mcp.session.id"]
    assert (attributes["lcp.tenant"], attributes["lcp.app"], attributes["lcp.app.version"]) == (
        "acme",
        "cases",
        1,
    )
    handler = by_name["handler cases"]
    records = by_name["records.query"]
    audit = by_name["audit.write"]
    assert handler.parent.span_id == server.context.span_id
    assert records.parent.span_id == handler.context.span_id
    assert audit.parent.span_id == server.context.span_id
    assert {s.context.trace_id for s in (handler, records, audit)} == {int(TRACE, 16)}
    assert dict(handler.attributes)["lcp.handler"] == "server/search.py"
    assert DISTINCTIVE not in every_value(finished)
    # The audit row names the same trace.
    assert ToolCallAudit.all_tenants.get().trace_id == TRACE


def test_without_a_client_trace_the_audit_row_names_the_platforms_trace(mcp_url, token, spans):
    call(mcp_url(), token, "acme_cases_find_case", {"query": DISTINCTIVE})
    server = next(
        s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER and "tools/call" in s.name
    )
    assert server.parent is None
    assert ToolCallAudit.all_tenants.get().trace_id == f"{server.context.trace_id:032x}"


def test_a_failed_handler_marks_its_span_and_the_requests_without_the_message(mcp_url, token, spans):
    result = call(mcp_url(), token, "acme_cases_boom", {})
    assert result.is_error is True
    finished = spans.get_finished_spans()
    server = next(s for s in finished if s.name == "tools/call acme_cases_boom")
    handler = next(s for s in finished if s.name == "handler cases")
    assert (
        server.status.status_code == StatusCode.ERROR
        and dict(server.attributes)["error.type"] == "tool_error"
    )
    assert handler.status.status_code == StatusCode.ERROR and "error.type" in dict(handler.attributes)
    assert "hunter2" not in every_value(finished)


def test_an_unknown_tool_is_an_error_span_with_the_jsonrpc_code(mcp_url, token, spans):
    async def main():
        async with mcp_client(mcp_url(), token) as client:
            with pytest.raises(MCPError):
                await client.call_tool("acme_nope", {"q": DISTINCTIVE})

    anyio.run(main)
    server = next(s for s in spans.get_finished_spans() if s.name == "tools/call acme_nope")
    assert dict(server.attributes)["error.type"] == "-32602"


def test_a_list_request_is_a_span_named_by_its_method_alone(mcp_url, token, spans):
    async def main():
        async with mcp_client(mcp_url(), token) as client:
            await client.list_tools()

    anyio.run(main)
    listing = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER and s.name == "tools/list"]
    assert listing and "gen_ai.tool.name" not in listing[0].attributes


def test_off_no_span_is_made(mcp_url, token):
    assert tracing.enabled() is False
    assert call(mcp_url(), token, "acme_cases_find_case", {"query": DISTINCTIVE}).is_error is False
    assert ToolCallAudit.all_tenants.get().trace_id == ""
