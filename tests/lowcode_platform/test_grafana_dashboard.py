"""deploy/grafana/lowcode-platform.json parses and names only metrics a served platform exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "lowcode-platform.json"
METRIC = re.compile(r"\blcp_[a-z_]+")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def exported_names(page: str) -> set[str]:
    """Every series name the page's families expose (a counter's ``_total``, a histogram's parts)."""
    return {
        family.name + suffix
        for family in text_string_to_metric_families(page)
        for suffix in SUFFIXES.get(family.type, ("",))
    }


def expressions(dashboard: dict) -> list[str]:
    found = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    found += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    return found


def test_the_dashboard_names_only_metrics_the_platform_exports(live_url, transactional_db):
    dashboard = json.loads(DASHBOARD.read_text())
    page = httpx2.get(f"{live_url}/metrics", timeout=30)
    assert page.status_code == 200
    exported = exported_names(page.text)
    named = {name for expr in expressions(dashboard) for name in METRIC.findall(expr)}
    assert named and named <= exported, named - exported
    # Calls, errors and latency by tenant and outcome, the sandbox pool, queues, agent runs.
    assert {
        "lcp_tool_calls_total",
        "lcp_tool_call_duration_seconds_bucket",
        "lcp_sandbox_slots_in_use",
        "lcp_tool_calls_queued",
        "lcp_mcp_tasks",
        "lcp_job_runs",
        "lcp_agent_runs",
    } <= named


def test_every_panel_queries_something_and_ids_are_unique():
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        assert panel["type"] == "row" or (panel["targets"] and all(t["expr"] for t in panel["targets"]))
    assert dashboard["uid"] == "lowcode-platform"
