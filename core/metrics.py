"""The platform's Prometheus metrics: defined once here, recorded where things happen.

Multiprocess-safe: with ``PROMETHEUS_MULTIPROC_DIR`` set before the first import (``serve --workers
N`` sets it for its workers), each process writes its values to files there and ``/metrics``
(``lowcode_platform.metrics``) adds them up. Label values come only from names the platform has
accepted (tenant slugs, deployed tool wire names, a fixed set of outcomes), so a caller cannot grow
the number of series: a call refused before its tool was found counts under ``tool="(refused)"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Counter, Gauge, Histogram

REFUSED_TOOL = "(refused)"

TOOL_CALLS = Counter(
    "lcp_tool_calls_total",
    "MCP tool calls answered, by tenant, tool (wire name) and outcome (the audit row's).",
    ["tenant", "tool", "outcome"],
)
TOOL_CALL_SECONDS = Histogram(
    "lcp_tool_call_duration_seconds",
    "Time from a tool call's start to its audit row, by tenant and tool.",
    ["tenant", "tool"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)

EGRESS_REQUESTS = Counter(
    "lcp_egress_requests_total",
    "Outbound requests of handlers, by tenant and outcome (ok, refused, failed).",
    ["tenant", "outcome"],
)
EGRESS_BYTES = Counter(
    "lcp_egress_bytes_total",
    "Bytes of handlers' outbound requests, by tenant and direction (sent, received).",
    ["tenant", "direction"],
)


@dataclass(frozen=True)
class GaugeSource:
    """A gauge whose value a function reads from the process's own state when sampled."""

    gauge: Gauge
    read: Callable[[], float]


_sources: dict[str, GaugeSource] = {}


def gauge_source(name: str, documentation: str) -> Callable[[Callable[[], float]], Callable[[], float]]:
    """Register ``read`` as the source of gauge ``name``, sampled by ``sample_gauges``.

    Each process sets its own value; across the processes of one server they are summed (the
    ``livesum`` mode: a process that ended no longer counts). A pool that another part of the
    platform adds (warm sandbox workers, say) registers its own gauge the same way.

    Raises:
        ValueError: a gauge of that name is registered already.
    """

    def register(read: Callable[[], float]) -> Callable[[], float]:
        if name in _sources:
            raise ValueError(f"gauge {name!r} is registered already")
        _sources[name] = GaugeSource(Gauge(name, documentation, multiprocess_mode="livesum"), read)
        return read

    return register


def sample_gauges() -> None:
    """Set every registered gauge from its source (a source that fails leaves its last value)."""
    for source in _sources.values():
        try:
            source.gauge.set(source.read())
        except (AttributeError, LookupError, RuntimeError, TypeError, ValueError):
            continue  # the state it reads is not there yet (the sandbox not started, say)


def record_tool_call(tenant: str, tool: str, outcome: str, seconds: float) -> None:
    """Count one answered tool call and observe its duration."""
    TOOL_CALLS.labels(tenant, tool, outcome).inc()
    TOOL_CALL_SECONDS.labels(tenant, tool).observe(seconds)
