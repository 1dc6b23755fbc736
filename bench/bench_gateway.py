"""MCP gateway benchmarks against real servers on loopback.

(a) tools/list for one caller in a tenant of 5,000 tools (cold: first list after a change; warm);
    baseline: loading the tenant's tool rows from the database alone.
(b) a tools/call round trip next to the same route called through the front-end path.
(c) tool calls per second with 16 concurrent clients, next to the SDK's own minimal server doing
    the same trivial work.

    .venv/bin/python bench/bench_gateway.py
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _setup import ROOT, setup_django, summary

setup_django()

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import bundle_from_mapping  # noqa: E402
from apps_runtime.models import Tool  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.models import Tenant  # noqa: E402

CALLS = 200
CONCURRENCY = 16
CONCURRENT_CALLS = 800


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(args: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(args, cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server on port {port} did not start")


def seed() -> tuple[str, str]:
    tenant = actions.create_tenant("bench", acting_user=None)
    actions.add_member(tenant, "alice", roles=["staff"], acting_user=None)
    handler = {"server/ping.py": "def handle(request):\n    return {'pong': True}\n"}
    ping = {
        "name": "ping_app",
        "routes": {"GET /ping": {"handler": "server/ping.py", "auth": "user"}},
        "mcp": {
            "tools": [
                {
                    "name": "ping",
                    "description": "Return a constant.",
                    "route": "GET /ping",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True, "destructiveHint": False},
                }
            ]
        },
    }
    deploy_bundle(tenant, bundle_from_mapping(ping, handler), acting_user=None)
    for n in range(5):
        filler = {
            "name": f"app_{n}",
            "routes": {"GET /ping": {"handler": "server/ping.py", "auth": "role:staff"}},
            "mcp": {
                "tools": [
                    {
                        "name": f"tool_{i}",
                        "description": f"Filler tool {i} of app {n}.",
                        "route": "GET /ping",
                        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                        "annotations": {"readOnlyHint": True, "destructiveHint": False},
                    }
                    for i in range(1000)
                ]
            },
        }
        deploy_bundle(tenant, bundle_from_mapping(filler, handler), acting_user=None)
    _, token = actions.issue_token(tenant, "alice", acting_user=None)
    return token, tenant.slug


def client(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return http, Client(streamable_http_client(url, http_client=http), mode="legacy")


async def list_all(mcp) -> int:
    count, cursor = 0, None
    while True:
        page = await mcp.list_tools(cursor=cursor)
        count += len(page.tools)
        if (cursor := page.next_cursor) is None:
            return count


def load_rows_ms(tenant_slug: str) -> tuple[int, float]:
    started = time.perf_counter()
    rows = list(Tool.objects.for_tenant(Tenant.objects.get(slug=tenant_slug)).values())
    return len(rows), (time.perf_counter() - started) * 1000


async def bench_list(url: str, token: str, tenant_slug: str) -> None:
    rows, db_ms = await anyio.to_thread.run_sync(load_rows_ms, tenant_slug)
    http, mcp = client(url, token)
    async with http, mcp:
        # Mark the catalog stale so the first list pays for compiling it.
        await anyio.to_thread.run_sync(
            lambda: actions.bump_state_version(Tenant.objects.get(slug=tenant_slug))
        )
        started = time.perf_counter()
        count = await list_all(mcp)
        cold_ms = (time.perf_counter() - started) * 1000
        warm = []
        for _ in range(5):
            started = time.perf_counter()
            await list_all(mcp)
            warm.append((time.perf_counter() - started) * 1000)
    warm_ms = statistics.median(warm)
    print(
        f"(a) tools/list of {count} tools (all pages), one caller, tenant of {rows} app tools"
    )
    print(f"    baseline: load the tool rows from the DB  {db_ms:8.1f} ms   1.00x")
    print(f"    first list (catalog compiled)            {cold_ms:8.1f} ms   {cold_ms / db_ms:5.2f}x")
    print(f"    warm list                                {warm_ms:8.1f} ms   {warm_ms / db_ms:5.2f}x")


async def bench_round_trip(base: str, url: str, token: str) -> None:
    http, mcp = client(url, token)
    front, tool = [], []
    async with http, mcp:
        await list_all(mcp)  # the client validates results against schemas it has listed
        for _ in range(20):  # warm up both paths
            await mcp.call_tool("bench_ping_app_ping", {})
            await http.get(f"{base}/t/bench/apps/ping_app/ping")
        for _ in range(CALLS):
            started = time.perf_counter()
            response = await http.get(f"{base}/t/bench/apps/ping_app/ping")
            front.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
            started = time.perf_counter()
            result = await mcp.call_tool("bench_ping_app_ping", {})
            tool.append((time.perf_counter() - started) * 1000)
            assert not result.is_error
    ratio = statistics.median(tool) / statistics.median(front)
    print(f"(b) round trip of a trivial route, {CALLS} calls each")
    print(f"    front-end path (baseline)  {summary(front)}   1.00x")
    print(f"    MCP tools/call             {summary(tool)}   {ratio:5.2f}x (aim <= 1.3x)")


async def throughput(url: str, token: str | None, tool_name: str) -> float:
    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for _ in range(CONCURRENCY):
            http, mcp = client(url, token)
            await stack.enter_async_context(http)
            session = await stack.enter_async_context(mcp)
            await list_all(session)  # outside the timing: the client caches the schemas it lists
            sessions.append(session)
        return await _drive(sessions, tool_name)


async def _drive(sessions, tool_name: str) -> float:
    remaining = CONCURRENT_CALLS

    async def worker(mcp):
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            result = await mcp.call_tool(tool_name, {})
            assert not result.is_error

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for mcp in sessions:
            tasks.start_soon(worker, mcp)
    return CONCURRENT_CALLS / (time.perf_counter() - started)


async def main(token: str, slug: str) -> None:
    port, sdk_port = free_port(), free_port()
    platform = start([sys.executable, "manage.py", "serve", "--port", str(port)], port)
    sdk = start(
        [sys.executable, str(Path(__file__).parent / "minimal_sdk_server.py"), str(sdk_port)], sdk_port
    )
    try:
        base = f"http://127.0.0.1:{port}"
        url = f"{base}/t/{slug}/mcp"
        await bench_list(url, token, slug)
        await bench_round_trip(base, url, token)
        ours = await throughput(url, token, "bench_ping_app_ping")
        theirs = await throughput(f"http://127.0.0.1:{sdk_port}/mcp", None, "ping")
        print(
            f"(c) tool calls/s, {CONCURRENCY} concurrent clients, {CONCURRENT_CALLS} calls, one process each"
        )
        print(f"    SDK minimal server (baseline, no auth, no DB, no sandbox) {theirs:8.1f}/s   1.00x")
        print(
            f"    platform gateway (auth, catalog, sandbox, audit) {ours:8.1f}/s   {ours / theirs:5.2f}x"
        )
    finally:
        platform.terminate()
        sdk.terminate()
        platform.wait(10)
        sdk.wait(10)


if __name__ == "__main__":
    anyio.run(main, *seed())
