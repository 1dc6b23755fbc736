"""Deploy a 1,000-tool manifest into a tenant already holding 10,000 tools.

Baseline in the same run: JSON-Schema-validating that manifest alone with the Python validator (what
every deploy paid before the jsonschema-rs fast paths). Also deploys the same manifest into an empty
tenant, to show the cost follows the manifest and not the tenant's size. Each deploy is timed from the
manifest as posted to the API (``bundle_from_mapping``) to the committed switch, then undeployed
untimed, so every repetition meets the same tenant. The machine is often shared, so each figure is
the median of ``--repeats`` runs, with its CPU time beside the wall time and the load average.

    .venv/bin/python bench/bench_deploy.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _setup import setup_django

setup_django()

from django.test.utils import override_settings  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

from apps_runtime.deploy import deploy_bundle, undeploy_app  # noqa: E402
from apps_runtime.manifest import MANIFEST_SCHEMA, bundle_from_mapping  # noqa: E402
from tenants import actions  # noqa: E402

TARGET_MS, AIM_MS = 400, 300


def manifest(app: str, tools: int) -> tuple[dict, dict]:
    return (
        {
            "name": app,
            "routes": {"GET /items/{item_id}": {"handler": "server/get.py", "auth": "user"}},
            "mcp": {
                "tools": [
                    {
                        "name": f"tool_{i}",
                        "title": f"Tool {i}",
                        "description": f"Get item number {i} of this app by its id.",
                        "route": "GET /items/{item_id}",
                        "inputSchema": {
                            "type": "object",
                            "properties": {
                                # distinct per tool, so no cache of identical schemas flatters the run
                                "item_id": {"type": "string", "description": f"Id of item kind {i}."},
                                "verbose": {"type": "boolean"},
                            },
                            "required": ["item_id"],
                            "additionalProperties": False,
                        },
                        "annotations": {"readOnlyHint": True, "destructiveHint": False},
                    }
                    for i in range(tools)
                ]
            },
        },
        {"server/get.py": "def handle(request):\n    return {}\n"},
    )


def timed(fn, *args) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def median_of(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def deploy_posted(tenant, subject: tuple[dict, dict]) -> None:
    """A deploy as the API runs it: from the posted manifest and files to the committed switch."""
    deploy_bundle(tenant, bundle_from_mapping(*subject), acting_user=None)


def deploys(tenants: list, subject: tuple[dict, dict], repeats: int) -> list[tuple[float, float]]:
    """Median wall and CPU ms of deploying ``subject`` into each of ``tenants``, undeployed after each.

    The tenants take turns, in alternating order, so a change in the machine's load and SQLite's
    periodic WAL checkpoint (every other deploy or so) fall on all of them alike.
    """
    runs: list[list[tuple[float, float]]] = [[] for _ in tenants]
    for repeat in range(repeats):
        turns = list(zip(tenants, runs, strict=True))
        for tenant, times in turns[:: -1 if repeat % 2 else 1]:
            times.append(timed(deploy_posted, tenant, subject))
            undeploy_app(tenant, subject[0]["name"], acting_user=None)
    return [median_of(times) for times in runs]


def row(label: str, figure: tuple[float, float], baseline: tuple[float, float]) -> str:
    wall, cpu = figure
    return f"  {label:40s} {wall:8.1f} {cpu:8.1f}   {wall / baseline[0]:6.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    big = actions.create_tenant("big", acting_user=None)
    for n in range(10):
        deploy_bundle(big, bundle_from_mapping(*manifest(f"filler_{n}", 1000)), acting_user=None)
    empty = actions.create_tenant("empty", acting_user=None)
    subject = manifest("subject", 1000)
    load_before = os.getloadavg()

    validator = Draft202012Validator(MANIFEST_SCHEMA)
    baseline = median_of([timed(list, validator.iter_errors(subject[0])) for _ in range(repeats)])
    # Production runs with DEBUG off: no per-query log (it formats every bulk INSERT's parameters).
    with override_settings(DEBUG=False):
        deploys([empty], subject, 1)  # warm-up: the validators compile on first use
        empty_ms, big_ms = deploys([empty, big], subject, repeats)
        [small_ms] = deploys([empty], manifest("small", 100), repeats)
    load_after = os.getloadavg()

    print(f"deploy of a 1,000-tool manifest, median of {repeats} runs on {os.cpu_count()} cores")
    print(
        f"  load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1 min); wall time"
        " stretches with the load, CPU time much less"
    )
    print(f"  {'':40s} {'wall ms':>8s} {'cpu ms':>8s}   vs baseline")
    print(row("JSON-Schema validation alone (baseline)", baseline, baseline))
    print(row("deploy into an empty tenant", empty_ms, baseline))
    print(row("deploy into a tenant of 10,000 tools", big_ms, baseline))
    print(row("100-tool manifest into a small tenant", small_ms, baseline))
    print(
        f"  tenant size effect (10,000 vs 0 tools): {big_ms[0] / empty_ms[0]:.2f}x;"
        f" manifest size effect (1,000 vs 100 tools): {empty_ms[0] / small_ms[0]:.2f}x"
    )
    verdict = "met" if big_ms[0] < TARGET_MS else "NOT met"
    aim = "met" if big_ms[0] < AIM_MS else "not met"
    print(
        f"  target: under {TARGET_MS} ms into 10,000 tools: {verdict} ({big_ms[0]:.0f} ms);"
        f" aim {AIM_MS} ms: {aim}"
    )


if __name__ == "__main__":
    main()
