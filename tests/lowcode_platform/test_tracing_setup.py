"""Django's requests become spans through the maintained instrumentation, without their query strings."""

from __future__ import annotations

import pytest
from opentelemetry.instrumentation.celery import CeleryInstrumentor
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import tracing
from lowcode_platform.tracing import configure_tracing, instrument_libraries

QUERY_VALUE = "zq-query-value-3302"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    instrument_libraries(provider)
    yield exporter
    DjangoInstrumentor().uninstrument()
    CeleryInstrumentor().uninstrument()
    tracing.disable()


def test_an_api_request_is_a_server_span_without_its_query(spans, api_client, acme, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/audit", {"member": QUERY_VALUE}).status_code == 200
    request = next(s for s in spans.get_finished_spans() if s.name.startswith("GET"))
    assert request.attributes["http.target"] == "/api/tenants/acme/audit"
    assert QUERY_VALUE not in str([dict(s.attributes) for s in spans.get_finished_spans()])


def test_without_an_endpoint_nothing_is_set_up(settings):
    settings.OTEL_EXPORTER_OTLP_ENDPOINT = ""
    assert configure_tracing() is False
    assert tracing.enabled() is False
