"""Soak: N MCP clients against one server process for a long while. Errors must stay 0, memory flat.

Each client (the official MCP SDK client, one session each) calls a trivial app tool and a built-in
tool (``records_query`` over a small collection) in turn, back to back, for the whole run. Printed:
calls, errors, calls/s, p50/p99 latency of the first and the last minute-or-tenth of the run (the
early figures are the baseline), and the server's resident memory at the start of the soak (after
warm-up) against its end and its peak. Loopback only; bounded by ``--seconds``.

    .venv/bin/python bench/bench_soak.py [--clients 16] [--seconds 600]

Exits 1 when any call failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from _setup import percentile, setup_django

setup_django()

import anyio  # noqa: E402
import httpx2  # noqa: E402
from bench_gateway import client, free_port, list_all, start  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import bundle_from_mapping  # noqa: E402
from tenants import actions  # noqa: E402

APP_TOOL = "soak_ping_app_ping"
BUILTIN = "soak_records_query"
SAMPLE_EVERY_S = 5.0
HANDLERS = {
    "server/ping.py": "def handle(request):\n    return {'pong': True}\n",
    "server/add.py": "def handle(request):\n    return request.records.create('notes', request.body), 201\n",
}
MANIFEST = {
    "name": "ping_app",
    "collections": {"notes": {"schema": {"type": "object"}, "read": "user", "write": "user"}},
    "routes": {
        "GET /ping": {"handler": "server/ping.py", "auth": "user"},
        "POST /notes": {"handler": "server/add.py", "auth": "user"},
    },
    "mcp": {
        "tools": [
            {
                "name": "ping",
                "description": "Return a constant.",
                "route": "GET /ping",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            }
        ]
    },
}


def seed() -> str:
    """Tenant ``soak`` with the ping app; a token for its member."""
    tenant = actions.create_tenant("soak", acting_user=None)
    actions.add_member(tenant, "alice", acting_user=None)
    deploy_bundle(tenant, bundle_from_mapping(MANIFEST, HANDLERS), acting_user=None)
    _, token = actions.issue_token(tenant, "alice", acting_user=None)
    return token


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


@dataclass
class Soak:
    deadline: float
    started: float
    samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds into the run, ms)
    errors: list[str] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    async def client_loop(self, url: str, token: str, ready: anyio.Event, go: anyio.Event) -> None:
        http, mcp = client(url, token)
        async with http, mcp:
            await list_all(mcp)  # the client checks results against the schemas it has listed
            await mcp.call_tool(BUILTIN, {"app": "ping_app", "collection": "notes", "limit": 5})
            ready.set()
            await go.wait()
            n = 0
            while time.monotonic() < self.deadline:
                await self.one_call(mcp, n)
                n += 1

    async def one_call(self, mcp, n: int) -> None:
        if n % 2 == 0:
            name, arguments = APP_TOOL, {}
        else:
            name, arguments = BUILTIN, {"app": "ping_app", "collection": "notes", "limit": 5}
        began = time.perf_counter()
        try:
            result = await mcp.call_tool(name, arguments)
            failure = result.content[0].text if result.is_error else None
        except Exception as err:  # noqa: BLE001 - a soak counts every kind of failure, then goes on
            failure = f"{type(err).__name__}: {err}"
        done = time.perf_counter()
        self.samples.append((done - self.started, (done - began) * 1000))
        if failure is not None:
            self.errors.append(f"{name}: {failure[:200]}")

    async def watch_memory(self, pid: int) -> None:
        while time.monotonic() < self.deadline:
            self.rss.append(rss_mib(pid))
            await anyio.sleep(SAMPLE_EVERY_S)
        self.rss.append(rss_mib(pid))


def window(samples: list[tuple[float, float]], start: float, end: float) -> list[float]:
    return [ms for at, ms in samples if start <= at < end] or [float("nan")]


def latency(label: str, samples: list[float]) -> str:
    return f"    {label:<20} p50 {percentile(samples, 50):7.2f} ms   p99 {percentile(samples, 99):7.2f} ms"


def report(soak: Soak, clients: int, seconds: float) -> None:
    calls = len(soak.samples)
    edge = min(60.0, seconds / 10)
    first, last = window(soak.samples, 0, edge), window(soak.samples, seconds - edge, seconds + 60)
    print(f"soak: {clients} MCP clients, one server process, {seconds:.0f} s, an app tool and records_query")
    print(f"    calls {calls}   errors {len(soak.errors)}   {calls / seconds:8.1f} calls/s")
    print(latency("whole run", [ms for _, ms in soak.samples]))
    print(latency(f"first {edge:.0f} s (base)", first) + "   1.00x")
    drift = percentile(last, 99) / percentile(first, 99)
    print(latency(f"last {edge:.0f} s", last) + f"   {drift:5.2f}x (p99)")
    base, end, peak = soak.rss[0], soak.rss[-1], max(soak.rss)
    print(
        f"    server RSS  start {base:7.1f} MiB   end {end:7.1f} MiB ({end / base:5.2f}x)"
        f"   peak {peak:7.1f} MiB ({peak / base:5.2f}x)"
    )
    for error in soak.errors[:10]:
        print(f"    error: {error}")


async def main(token: str, clients: int, seconds: float) -> int:
    port = free_port()
    server = start([sys.executable, "manage.py", "serve", "--port", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/t/soak/mcp"
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            for n in range(20):  # notes for records_query to page through, written the front-end way
                added = await http.post(f"http://127.0.0.1:{port}/t/soak/apps/ping_app/notes", json={"n": n})
                added.raise_for_status()
        go = anyio.Event()
        soak = Soak(deadline=float("inf"), started=0.0)
        async with anyio.create_task_group() as tasks:
            readies = [anyio.Event() for _ in range(clients)]
            for ready in readies:
                tasks.start_soon(soak.client_loop, url, token, ready, go)
            for ready in readies:
                await ready.wait()
            soak.started, soak.deadline = time.perf_counter(), time.monotonic() + seconds
            tasks.start_soon(soak.watch_memory, server.pid)
            go.set()
        report(soak, clients, seconds)
        return 1 if soak.errors else 0
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=600.0)
    options = parser.parse_args()
    sys.exit(anyio.run(main, seed(), options.clients, options.seconds))
