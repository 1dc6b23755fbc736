"""End to end: a served platform with OTEL_EXPORTER_OTLP_ENDPOINT sends its spans over OTLP/HTTP
to a receiver of this test's own on loopback, which decodes them with opentelemetry-proto."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.mcp_gateway.conftest import mcp_client
from tests.support.platform_process import PlatformProcess, migrated_database

TRACE = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE}-b7ad6b7169203331-01"
DISTINCTIVE = "zq-otlp-argument-9043"
WANTED = "tools/call acme_cases_find_case"


class Receiver(ThreadingHTTPServer):
    """Keeps every export request it gets; ``seen`` is set once the call's server span came."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies: list[bytes] = []
        self.requests: list[ExportTraceServiceRequest] = []
        self.seen = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        server: Receiver = self.server  # type: ignore[assignment]
        server.bodies.append(body)
        server.requests.append(request)
        if self.path == "/v1/traces" and any(s.name == WANTED for s in spans_of([request])):
            server.seen.set()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def spans_of(requests):
    return [s for r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]


@pytest.mark.slow
def test_a_served_platform_exports_the_calls_trace_over_otlp_http(tmp_path):
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    database = migrated_database(tmp_path)
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    platform = PlatformProcess(tmp_path, database.url, env=env)
    try:
        token = platform.seed()[0]["tokens"]["reader"]
        platform.start()

        async def main():
            async with mcp_client(f"{platform.base_url}/t/acme/mcp", token) as client:
                meta = {"traceparent": TRACEPARENT}
                return await client.call_tool("acme_cases_find_case", {"query": DISTINCTIVE}, meta=meta)

        assert anyio.run(main).is_error is False
        assert receiver.seen.wait(timeout=60), "no span of the call reached the receiver"
    finally:
        platform.stop()
        receiver.shutdown()
        database.drop()

    resources = {
        attribute.key: attribute.value.string_value
        for request in receiver.requests
        for rs in request.resource_spans
        for attribute in rs.resource.attributes
    }
    assert resources["service.name"] == "lowcode-platform"
    spans = spans_of(receiver.requests)
    server = next(s for s in spans if s.name == WANTED)
    assert server.trace_id.hex() == TRACE and server.parent_span_id.hex() == "b7ad6b7169203331"
    attributes = {a.key: a.value for a in server.attributes}
    assert attributes["gen_ai.tool.name"].string_value == "acme_cases_find_case"
    assert attributes["lcp.tenant"].string_value == "acme"
    in_trace = {s.name for s in spans if s.trace_id.hex() == TRACE}
    assert {"handler cases", "audit.write"} <= in_trace
    assert any(name.startswith("records.") for name in in_trace)
    assert not any(DISTINCTIVE.encode() in body for body in receiver.bodies)
