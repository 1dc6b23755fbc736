"""Turning traces on: with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, an OTLP/HTTP exporter in a batch,
and the maintained instrumentations of Django (the REST API, the console, app front-ends) and
Celery (jobs, MCP task runs and agent runs sent to workers carry the trace in their messages).

The SDK reads the standard ``OTEL_*`` variables itself (endpoint, headers, timeout, sampler;
``OTEL_PYTHON_DJANGO_EXCLUDED_URLS`` to leave out /metrics, say); ``OTEL_SERVICE_NAME`` defaults to
``lowcode-platform``. Without the endpoint nothing here runs and the SDK is not even imported
(hence the imports inside the function), and ``core.tracing`` stays off.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from core import tracing


def configure_tracing() -> bool:
    """Export spans when an OTLP endpoint is configured; whether it is."""
    if not settings.OTEL_EXPORTER_OTLP_ENDPOINT or tracing.enabled():
        return tracing.enabled()
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: settings.OTEL_SERVICE_NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)  # libraries' spans (the MCP SDK's client side) too
    tracing.enable(provider)
    instrument_libraries(provider)
    return True


def instrument_libraries(provider: Any) -> None:
    """Django's requests and Celery's tasks as spans of ``provider``."""
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    DjangoInstrumentor().instrument(tracer_provider=provider, request_hook=path_only)
    CeleryInstrumentor().instrument(tracer_provider=provider)


def path_only(span: Any, request: Any) -> None:
    """A request's query string may carry a route's arguments (an app's GET route): its span keeps
    the path only."""
    if span is not None and span.is_recording():
        span.set_attribute("http.target", request.path)
        span.set_attribute("http.url", request.path)
        span.set_attribute("url.query", "")
