"""Turning traces on: with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, an OTLP/HTTP exporter in a batch.

The SDK reads the standard ``OTEL_*`` variables itself (endpoint, headers, timeout, sampler);
``OTEL_SERVICE_NAME`` defaults to ``lowcode-platform``. Without the endpoint nothing here runs and
the SDK is not even imported (``core.tracing`` stays off).
"""

from __future__ import annotations

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
    return True
