"""Spans, when traces are exported: one switch, turned on once at start (``lowcode_platform.tracing``).

Off (no ``OTEL_EXPORTER_OTLP_ENDPOINT``), ``span`` hands back one shared no-op context manager
and nothing of OpenTelemetry runs: no span objects, no context switches, nothing to measure.
On, spans come from the provider ``enable`` was given, so a test can install an in-memory one.

What never goes into a span: argument values, record contents, secrets, prompts, exception
messages (they may quote any of these). A failure is its ``error.type`` (the exception's class or
an error code) and an error status without a description.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACER_NAME = "lowcode-platform"

_tracer: trace.Tracer | None = None
_provider: trace.TracerProvider | None = None
_NOOP = nullcontext()
_PROPAGATOR = TraceContextTextMapPropagator()

Attributes = Mapping[str, str | int | float | bool]


def enable(provider: trace.TracerProvider) -> None:
    """Record spans with ``provider`` from now on."""
    global _tracer, _provider
    _tracer, _provider = provider.get_tracer(TRACER_NAME), provider


def disable() -> None:
    """Record no more spans (tests switch back to the default)."""
    global _tracer, _provider
    _tracer, _provider = None, None


def enabled() -> bool:
    return _tracer is not None


def provider() -> trace.TracerProvider | None:
    """The provider spans are recorded with (for libraries that take one: pydantic-ai), or None."""
    return _provider


def span(
    name: str,
    attributes: Attributes | None = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    parent: str | None = None,
) -> AbstractContextManager[trace.Span | None]:
    """A span around the block, child of the current one (or of the W3C ``parent`` given).

    Yields the span, or None when traces are off.
    """
    if _tracer is None:
        return _NOOP
    return _recording(_tracer, name, attributes, kind, context_of(parent) if parent else None)


@contextmanager
def _recording(
    tracer: trace.Tracer, name: str, attributes: Attributes | None, kind: SpanKind, context: Any
) -> Iterator[trace.Span]:
    with tracer.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        context=context,
        record_exception=False,  # its message may quote arguments or records
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as err:
            status = getattr(current, "status", None)  # the block may have said why already (an error code)
            if status is None or status.status_code != StatusCode.ERROR:
                failed(current, type(err).__qualname__)
            raise


def failed(current: trace.Span | None, error_type: str) -> None:
    """Mark ``current`` as failed with ``error_type`` (an error code or class name, never a message)."""
    if current is not None and current.is_recording():
        current.set_attribute("error.type", error_type)
        current.set_status(StatusCode.ERROR)


def annotate(attributes: Attributes) -> None:
    """Add ``attributes`` to the current span (nothing when traces are off)."""
    if _tracer is not None:
        trace.get_current_span().set_attributes(attributes)


def context_of(traceparent: str) -> otel_context.Context | None:
    """The context a W3C ``traceparent`` names, or None when it is not a valid one."""
    extracted = _PROPAGATOR.extract({"traceparent": traceparent})
    return extracted if trace.get_current_span(extracted).get_span_context().is_valid else None


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span, for work that carries the trace on; None when off."""
    if _tracer is None:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def current_trace_id() -> str:
    """The current span's trace id (32 hex digits), or "" when off or outside a span."""
    if _tracer is None:
        return ""
    found = trace.get_current_span().get_span_context()
    return f"{found.trace_id:032x}" if found.is_valid else ""


def outbound_request(
    method: str, host: str, port: int | None = None, *, parent: str | None = None
) -> AbstractContextManager[trace.Span | None]:
    """A CLIENT span for a handler's outbound HTTP request: method, host and port only (a path or
    query may carry secrets). Set ``traceparent`` on the request from ``current_traceparent()``
    inside the block; mark a failed answer with ``failed(span, str(status))``."""
    attributes: dict[str, str | int] = {"http.request.method": method, "server.address": host}
    if port is not None:
        attributes["server.port"] = port
    return span(method, attributes, kind=SpanKind.CLIENT, parent=parent)
