"""Traces on against off: the cost of a tools/call on the gateway's side, in one run, as ratios.

An in-process MCP client (``mcp_gateway.transport.in_process.connect``) calls an app tool (through
the handler sandbox, with one records call) in alternating rounds with tracing off and on (the
SDK with a batch processor, as OTLP export runs, into an in-memory exporter so no network time is
counted). Printed: this process's CPU time and the wall time per call, on/off.

    .venv/bin/python -m pytest tests/mcp_gateway/bench_traces.py -s -q -p no:cacheprovider

(Not a test module by name, so the suite never collects it; pytest runs a file it is given.)
"""

from __future__ import annotations

import statistics
import time

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import tracing
from mcp_gateway.transport.in_process import connect

CALLS = 150
ROUNDS = 4


@pytest.mark.django_db(transaction=True)
def test_bench_traces(acme, deploy, make_token):
    deploy(acme)
    _, raw = make_token(acme, "reader")
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(BatchSpanProcessor(exporter))

    async def loop() -> tuple[float, float]:
        async with connect("acme", raw) as client:
            await client.call_tool("acme_cases_find_case", {"query": "warm"})
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(CALLS):
                await client.call_tool("acme_cases_find_case", {"query": "ada"})
            return (time.process_time() - cpu) / CALLS, (time.perf_counter() - wall) / CALLS

    figures: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
    for _ in range(ROUNDS):
        for mode in ("off", "on"):
            if mode == "on":
                tracing.enable(provider)
            try:
                figures[mode].append(anyio.run(loop))
            finally:
                tracing.disable()
                exporter.clear()
    off_cpu = statistics.median(f[0] for f in figures["off"])
    on_cpu = statistics.median(f[0] for f in figures["on"])
    off_wall = statistics.median(f[1] for f in figures["off"])
    on_wall = statistics.median(f[1] for f in figures["on"])
    print(f"\ntools/call, {ROUNDS} alternating rounds of {CALLS} calls (medians):")
    for what, off, on in (("CPU ", off_cpu, on_cpu), ("wall", off_wall, on_wall)):
        print(f"  {what} per call: off {off * 1000:.3f} ms, on {on * 1000:.3f} ms, on/off {on / off:.2f}")
