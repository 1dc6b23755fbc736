"""A handler's outbound request is a CLIENT span under its handler run: method, host, status; never
its path, query or a secret."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from apps_runtime.egress.secrets import set_secret
from core import tracing
from tests.apps_runtime import test_egress as egress

# The egress tests' fake API, app and call, as fixtures of this module too.
api, app, call, forbidden, _networks = egress.api, egress.app, egress.call, egress.forbidden, egress._networks
SECRET_VALUE = egress.SECRET_VALUE

pytestmark = pytest.mark.django_db


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    yield exporter
    tracing.disable()


def test_an_outbound_request_is_a_client_span_of_the_handler_run(call, api, app, spans):
    set_secret(app, "API_KEY", SECRET_VALUE)
    status, body = call(url=f"{api.base}/echo/SECRET?q=zq-query-1", secret="API_KEY")
    assert status == 200 and body["status"] == 200
    finished = spans.get_finished_spans()
    outbound = next(s for s in finished if s.kind == SpanKind.CLIENT)
    handler = next(s for s in finished if s.name == "handler hooks")
    assert outbound.name == "GET" and outbound.parent.span_id == handler.context.span_id
    assert dict(outbound.attributes) == {
        "http.request.method": "GET",
        "server.address": "127.0.0.1",
        "http.response.status_code": 200,
    }
    everything = str([(s.name, dict(s.attributes)) for s in finished])
    assert SECRET_VALUE not in everything and "zq-query-1" not in everything and "/echo" not in everything


def test_a_refused_request_marks_its_span(call, spans):
    status, body = call(url="http://198.51.100.7/nope")
    assert status == 200 and body["refused"]
    outbound = next(s for s in spans.get_finished_spans() if s.kind == SpanKind.CLIENT)
    assert outbound.status.status_code == StatusCode.ERROR and outbound.attributes["error.type"]
