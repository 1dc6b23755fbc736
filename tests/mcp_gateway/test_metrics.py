"""``/metrics``: tool calls per tenant, tool and outcome, latency histograms, gauges; who may scrape."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from core.metrics import REFUSED_TOOL
from tests.mcp_gateway.conftest import mcp_client
from tests.support.platform_process import PlatformProcess, migrated_database

FIND_CASE = "acme_cases_find_case"


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a Prometheus text page: (name, labels) -> value."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(page: dict, name: str, **labels: str) -> float:
    return page.get((name, frozenset(labels.items())), 0.0)


def scrape(base_url: str, **headers: str) -> dict:
    response = httpx2.get(f"{base_url}/metrics", headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return samples(response.text)


@pytest.fixture
def reader(mcp_url, acme, deploy, make_token):
    from tests.support.apps import HANDLERS, cases_manifest

    deploy(acme, cases_manifest(), HANDLERS)
    return make_token(acme, "reader")[1]


def test_tool_calls_are_counted_by_tenant_tool_and_outcome_with_latency_histograms(mcp_url, live_url, reader):
    before = scrape(live_url)

    async def calls():
        async with mcp_client(mcp_url(), reader) as client:
            await client.call_tool(FIND_CASE, {"query": "ada"})
            await client.call_tool(FIND_CASE, {"query": "a"})  # too short: invalid arguments
            with pytest.raises(Exception):  # noqa: B017 - any refusal; the count is what is checked
                await client.call_tool("acme_no_such_tool_" + "x" * 20, {})

    anyio.run(calls)
    after = scrape(live_url)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("lcp_tool_calls_total", tenant="acme", tool=FIND_CASE, outcome="ok") == 1
    assert grew("lcp_tool_calls_total", tenant="acme", tool=FIND_CASE, outcome="invalid_arguments") == 1
    assert grew("lcp_tool_calls_total", tenant="acme", tool=REFUSED_TOOL, outcome="denied") == 1
    assert grew("lcp_tool_call_duration_seconds_count", tenant="acme", tool=FIND_CASE) == 2
    assert not any("no_such_tool" in str(labels) for _, labels in after)


def test_the_page_has_the_session_sandbox_task_and_job_gauges(live_url, reader):
    page = scrape(live_url)
    names = {name for name, _ in page}
    for gauge in (
        "lcp_mcp_sessions",
        "lcp_tool_threads_running",
        "lcp_tool_calls_queued",
        "lcp_sandbox_slots",
        "lcp_sandbox_slots_in_use",
        "lcp_sandbox_slots_waiting",
        "lcp_sandbox_warm_workers",
        "lcp_sandbox_warm_workers_busy",
        "lcp_sandbox_warm_held_bytes",
    ):
        assert gauge in names
    assert value(page, "lcp_sandbox_slots") > 0
    assert ("lcp_mcp_tasks", frozenset({("status", "working")})) in page
    assert ("lcp_job_runs", frozenset({("status", "queued")})) in page
    assert ("lcp_agent_runs", frozenset({("status", "awaiting_approval")})) in page


@pytest.mark.django_db
def test_a_scraper_outside_the_allowed_networks_needs_the_token(settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.1.0.0/16"]
    settings.METRICS_TOKEN = "scrape-secret"
    assert Client(REMOTE_ADDR="192.0.2.7").get("/metrics").status_code == 403
    refused = Client(REMOTE_ADDR="192.0.2.7").get("/metrics", headers={"Authorization": "Bearer nope"})
    assert refused.status_code == 403 and refused.json()["code"] == "metrics_not_allowed"
    token = {"Authorization": "Bearer scrape-secret"}
    allowed = Client(REMOTE_ADDR="192.0.2.7").get("/metrics", headers=token)
    assert allowed.status_code == 200 and b"lcp_tool_calls_total" in allowed.content
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200


@pytest.mark.django_db
def test_without_a_token_only_the_allowed_networks_may_scrape(settings):
    settings.METRICS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.METRICS_TOKEN = ""
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    empty = Client(REMOTE_ADDR="192.0.2.7").get("/metrics", headers={"Authorization": "Bearer "})
    assert empty.status_code == 403


@pytest.mark.slow
def test_with_serve_workers_2_the_page_adds_up_the_calls_of_every_worker(tmp_path):
    database = migrated_database(tmp_path)
    platform = PlatformProcess(
        tmp_path, database.url, env={"MCP_STATELESS": "true"}, serve_args=("--workers", "2")
    )
    try:
        token = platform.seed()[0]["tokens"]["reader"]
        platform.start()
        counters = tmp_path / "var" / "metrics"

        def counting() -> set[str]:
            """The pids of the workers that counted calls (each writes a file of its own, named by pid)."""
            return {path.stem.rsplit("_", 1)[1] for path in counters.glob("counter_*.db")}

        async def main() -> int:
            # A new connection per call, so both workers take some of them. In batches until both have:
            # the second worker may still be starting when the first answers /healthz on a loaded host.
            calls = 0
            with anyio.fail_after(120):
                while calls == 0 or len(counting()) < 2:
                    for _ in range(10):
                        url = f"{platform.base_url}/t/acme/mcp"
                        async with mcp_client(url, token, mode="2026-07-28") as client:
                            result = await client.call_tool(FIND_CASE, {"query": "ada"})
                            assert result.is_error is False
                    calls += 10
            return calls

        calls = anyio.run(main)
        assert len(counting()) == 2  # both workers counted calls...
        # ...and every scrape (whichever worker answers it) gives the sum of both workers' counts.
        for _ in range(4):
            page = scrape(platform.base_url)
            assert value(page, "lcp_tool_calls_total", tenant="acme", tool=FIND_CASE, outcome="ok") == calls
    finally:
        platform.stop()
        database.drop()
