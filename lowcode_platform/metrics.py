"""``/metrics``: the platform's Prometheus metrics, for scrapers the settings allow.

What is counted lives in ``core.metrics`` (tool calls, by tenant, tool and outcome, with latency
histograms, and the gauges registered there). This module adds the gauges of this process's own
state (MCP sessions and listen streams, tool threads per tenant share, sandbox call slots), sampled
every few seconds and at each scrape, and, read from the database at each scrape, the unfinished
MCP tasks, job runs and agent runs (they run in Celery workers, which serve no HTTP).
``deploy/grafana/`` holds a dashboard of them. Allowed: a scraper from
``METRICS_ALLOWED_NETWORKS`` (loopback by default), or one sending ``Authorization: Bearer
<METRICS_TOKEN>``; anyone else gets a 403 problem.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

import anyio
from django.conf import settings
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from agents.models import AgentRun
from apps_runtime.models import JobRun
from apps_runtime.sandbox import get_sandbox
from core.metrics import gauge_source, sample_gauges
from core.problems import problem, problem_response
from mcp_gateway.models import ToolTask
from mcp_gateway.protocol.concurrency import shares

if TYPE_CHECKING:
    from mcp_gateway.transport.app import Gateway

SAMPLE_SECONDS = 5.0


def register_process_gauges(gateway: Gateway) -> None:
    """The gauges of one server process's state, read from ``gateway`` and the sandbox."""
    gauge_source("lcp_mcp_sessions", "Open MCP sessions (handshake-era clients).")(gateway.open_sessions)
    gauge_source("lcp_mcp_listen_streams", "Open subscriptions/listen streams (2026-07-28 clients).")(
        gateway.notifier.streams.count
    )
    gauge_source("lcp_tool_threads_running", "Tool calls holding a gateway thread.")(
        lambda: shares.totals()[0]
    )
    gauge_source("lcp_tool_calls_queued", "Tool calls waiting for their tenant's share of the threads.")(
        lambda: shares.totals()[1]
    )
    gauge_source("lcp_sandbox_slots_in_use", "Sandbox call slots held by a handler run.")(
        lambda: get_sandbox().pool_usage()[0]
    )
    gauge_source("lcp_sandbox_slots_waiting", "Handler runs waiting for a sandbox call slot.")(
        lambda: get_sandbox().pool_usage()[1]
    )
    gauge_source("lcp_sandbox_slots", "Sandbox call slots (handler runs at once).")(
        lambda: get_sandbox().pool_usage()[2]
    )
    gauge_source("lcp_sandbox_warm_workers", "Warm sandbox workers (loaded handlers kept for more calls).")(
        lambda: get_sandbox().pool_stats()["workers"]
    )
    gauge_source("lcp_sandbox_warm_workers_busy", "Warm sandbox workers running a call.")(
        lambda: get_sandbox().pool_stats()["busy"]
    )
    gauge_source(
        "lcp_sandbox_warm_held_bytes", "Memory the warm sandbox workers hold, as the host last measured it."
    )(lambda: get_sandbox().pool_stats()["held_mb"] << 20)


async def sample_forever() -> None:
    """Keep this process's gauges current, so a scrape answered by another worker sees them too."""
    while True:
        # On a thread: a source may take a lock (the sandbox's pools) or retire an idle worker.
        await anyio.to_thread.run_sync(sample_gauges)
        await anyio.sleep(SAMPLE_SECONDS)


class UnfinishedWork(Collector):
    """MCP tasks, job runs and agent runs not finished yet, by status: one grouped count each per scrape."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        tasks = GaugeMetricFamily("lcp_mcp_tasks", "Unfinished MCP tasks, by status.", labels=["status"])
        unfinished = [ToolTask.Status.WORKING, ToolTask.Status.INPUT_REQUIRED]
        counts = _counts(ToolTask.all_tenants.filter(status__in=unfinished))
        for status in unfinished:
            tasks.add_metric([status], counts.get(status, 0))
        yield tasks
        runs = GaugeMetricFamily("lcp_job_runs", "Unfinished app job runs, by status.", labels=["status"])
        unfinished = [JobRun.Status.QUEUED, JobRun.Status.RUNNING]
        counts = _counts(JobRun.all_tenants.filter(status__in=unfinished))
        for status in unfinished:
            runs.add_metric([status], counts.get(status, 0))
        yield runs
        agents = GaugeMetricFamily("lcp_agent_runs", "Unfinished agent runs, by status.", labels=["status"])
        unfinished = [AgentRun.Status.QUEUED, AgentRun.Status.RUNNING, AgentRun.Status.AWAITING_APPROVAL]
        counts = _counts(AgentRun.all_tenants.filter(status__in=unfinished))
        for status in unfinished:
            agents.add_metric([status], counts.get(status, 0))
        yield agents


def _counts(rows) -> dict[str, int]:
    return {row["status"]: row["n"] for row in rows.values("status").annotate(n=Count("pk")).order_by()}


def scraper_allowed(request: HttpRequest) -> bool:
    """Whether the request comes from an allowed network or carries the metrics token."""
    token = settings.METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net) for net in settings.METRICS_ALLOWED_NETWORKS)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """The Prometheus text format: this server's processes, and the database's unfinished work."""
    if not scraper_allowed(request):
        detail = "Metrics are served to METRICS_ALLOWED_NETWORKS, or with a bearer METRICS_TOKEN."
        return problem_response(problem(403, "metrics_not_allowed", detail))
    sample_gauges()
    if settings.PROMETHEUS_MULTIPROC_DIR:
        processes = CollectorRegistry()
        MultiProcessCollector(processes, path=settings.PROMETHEUS_MULTIPROC_DIR)
    else:
        processes = REGISTRY
    database = CollectorRegistry()
    database.register(UnfinishedWork())
    body = generate_latest(processes) + generate_latest(database)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
