"""Fairness between tenants on one server process: does one tenant's flood slow another down?

(a) Tenant "quiet" calls a trivial tool, one call at a time: its p50 idle (the baseline), then while
    tenant "flood" keeps ~100 MCP clients calling a tool whose handler sleeps 1 s. Aim: quiet's p50
    under the flood within 2x of idle. Before the per-tenant share (MCP_TENANT_SHARE) the flood took
    every gateway thread and pushed quiet's median to seconds.
(b) The same through the front-end path (/t/<tenant>/apps/...): quiet's p50 idle, then while flood
    keeps ~100 HTTP clients on its slow route. Django gives each request its own thread, so the
    gateway's pool is not involved; the sandbox's per-tenant cap bounds the handler runs.
(c) Job fan-out (issue 26 item 1): one tools/call of flood's starts a route that enqueues itself 100
    times per run; quiet's trivial tool p50 while the runs go on (with no broker they run on the
    server's run threads, at most JOBS_TENANT_SHARE of them for flood, capped per call and per minute).
(d) Task flood (item 2): flood's clients keep creating 3 s tasks; quiet's trivial task, created and
    polled (every 20 ms) until completed, p50 idle and during the flood (the in-process task threads
    are shared fairly: TASK_TENANT_SHARE).
(e) Heavy reads (item 8): 8 read-only clients of flood loop records_query with limit 200 over 250 KB
    records; quiet's trivial tool p50 (pages stop at the output budget before records are loaded).

Flooders honour the answer's Retry-After when refused as busy, as well-behaved clients do; they run
in a child process so their own load does not slow the measuring client, and the quiet tenant is
measured once the first slow calls are through (every flooder is then in line). Loopback only;
about four minutes in all.

    .venv/bin/python bench/bench_fairness.py [--clients 100] [--calls 40] [--cases a,b,c,d,e]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

RAW = TypeAdapter(dict)
SLOW_S = 1.0
TOKENS_PER_TENANT = 10  # sessions are capped per token (MCP_SESSIONS_PER_TOKEN, 20 by default)
FLOOD_LIMIT_S = 180  # the flooder stops by itself even if this process dies
WARM_CALLS, WARM_LIMIT_S = 8, 60
HANDLERS = {
    "server/slow.py": f"import time\n\ndef handle(request):\n    time.sleep({SLOW_S})\n    return {{}}\n",
    "server/ping.py": "def handle(request):\n    return {'pong': True}\n",
    "server/fan.py": (
        "from platform_sdk import LimitExceeded\n\ndef handle(request):\n    try:\n"
        "        for _ in range(100):\n            request.enqueue('POST /jobs/fan', {})\n"
        "    except LimitExceeded:\n        pass\n    return {'queued': True}\n"
    ),
    "server/sleepy.py": "import time\n\ndef handle(request):\n    time.sleep(3)\n    return {'slept': 3}\n",
}
MANIFEST = {
    "name": "fair",
    "routes": {
        "POST /slow": {"handler": "server/slow.py", "auth": "user"},
        "GET /ping": {"handler": "server/ping.py", "auth": "user"},
        "POST /fan": {"handler": "server/fan.py", "auth": "user"},
        "POST /jobs/fan": {"handler": "server/fan.py", "auth": "internal"},
        "POST /sleepy": {"handler": "server/sleepy.py", "auth": "user", "timeoutMs": 10000},
        "GET /quick": {"handler": "server/ping.py", "auth": "user"},
    },
    "collections": {"docs": {"schema": {"type": "object"}, "read": "user", "write": "user"}},
    "mcp": {
        "tools": [
            {
                "name": "slow",
                "description": "Sleep a second.",
                "route": "POST /slow",
                "inputSchema": {"type": "object"},
            },
            {
                "name": "ping",
                "description": "Answer at once.",
                "route": "GET /ping",
                "inputSchema": {"type": "object"},
            },
            {
                "name": "fan",
                "description": "Start a fan-out of background runs.",
                "route": "POST /fan",
                "inputSchema": {"type": "object"},
            },
            {
                "name": "sleepy",
                "description": "Sleep three seconds, as a task.",
                "route": "POST /sleepy",
                "inputSchema": {"type": "object"},
                "task": "required",
            },
            {
                "name": "quick",
                "description": "Answer at once, as a task.",
                "route": "GET /quick",
                "inputSchema": {"type": "object"},
                "task": "required",
            },
        ]
    },
}


def mcp_client(url: str, token: str):
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60, read=120)
    )
    return http, Client(streamable_http_client(url, http_client=http), mode="legacy")


# -- the flooder (child process) ----------------------------------------------------------------------------


class Flood:
    def __init__(self) -> None:
        self.done = 0
        self.refused = 0
        self.failed = 0

    async def mcp_worker(self, url: str, token: str, stop: anyio.Event) -> None:
        http, client = mcp_client(url, token)
        async with http, client:
            while not stop.is_set():
                try:  # a tool not listed yet is listed first, inside call_tool: that may be refused too
                    result = await client.call_tool("flood_fair_slow", {})
                except MCPError as err:
                    self.refused += 1
                    await anyio.sleep((err.error.data or {}).get("retryAfter", 1))
                    continue
                if result.is_error:
                    self.failed += 1
                else:
                    self.done += 1

    async def fanout_worker(self, url: str, token: str, stop: anyio.Event) -> None:
        """One call that starts the fan-out, then nothing: the runs go on in the server."""
        http, client = mcp_client(url, token)
        async with http, client:
            result = await client.call_tool("flood_fair_fan", {})
            self.failed += bool(result.is_error)
            self.done += not result.is_error
            await stop.wait()

    async def task_worker(self, url: str, token: str, stop: anyio.Event) -> None:
        http, client = mcp_client(url, token)
        async with http, client:
            while not stop.is_set():
                result = await create_task(client, "flood_fair_sleepy")
                if result.get("isError"):
                    self.refused += 1  # a task cap: wait and try again, as a client would
                    await anyio.sleep(1)
                else:
                    self.done += 1

    async def read_worker(self, url: str, token: str, stop: anyio.Event) -> None:
        http, client = mcp_client(url, token)
        async with http, client:
            while not stop.is_set():
                result = await client.call_tool(
                    "flood_records_query", {"app": "fair", "collection": "docs", "limit": 200}
                )
                self.failed += bool(result.is_error)
                self.done += not result.is_error

    async def front_worker(self, http: httpx2.AsyncClient, url: str, token: str, stop: anyio.Event) -> None:
        while not stop.is_set():
            response = await http.post(url, json={}, headers={"Authorization": f"Bearer {token}"})
            if response.status_code == 200:
                self.done += 1
            elif response.status_code in (429, 503):
                self.refused += 1
                await anyio.sleep(int(response.headers.get("retry-after", "1")))
            else:
                self.failed += 1


async def flood(kind: str, base: str, tokens: list[str], clients: int) -> None:
    """Keep ``clients`` callers on the slow route until stdin closes; print counts as JSON."""
    stats, stop = Flood(), anyio.Event()

    async def stop_on_stdin_close() -> None:
        await anyio.to_thread.run_sync(sys.stdin.read)
        stop.set()

    with anyio.move_on_after(FLOOD_LIMIT_S):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(stop_on_stdin_close)
            limits = httpx2.Limits(max_connections=clients + 10)
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=120), limits=limits) as http:
                workers = {
                    "mcp": stats.mcp_worker,
                    "fanout": stats.fanout_worker,
                    "tasks": stats.task_worker,
                    "reads": stats.read_worker,
                }
                for n in range(clients):
                    token = tokens[n % len(tokens)]
                    if kind in workers:
                        tasks.start_soon(workers[kind], f"{base}/t/flood/mcp", token, stop)
                    else:
                        tasks.start_soon(
                            stats.front_worker, http, f"{base}/t/flood/apps/fair/slow", token, stop
                        )
                    await anyio.sleep(0.02)  # a ramp, not a thundering herd of initializes
                # Steady state: the first slow calls are through, every client is in line.
                with anyio.move_on_after(WARM_LIMIT_S):
                    while stats.done + stats.failed < min(
                        WARM_CALLS, clients if kind == "fanout" else WARM_CALLS
                    ):
                        await anyio.sleep(0.1)
                print("ready", flush=True)
                await stop.wait()
                tasks.cancel_scope.cancel()
    print(json.dumps({"done": stats.done, "refused": stats.refused, "failed": stats.failed}), flush=True)


# -- the measuring side (this process) ----------------------------------------------------------------------


def seed(records: int) -> dict[str, list[str]]:
    from apps_runtime.compiled import compiled_version
    from apps_runtime.deploy import deploy_bundle
    from apps_runtime.manifest import bundle_from_mapping
    from apps_runtime.models import App
    from apps_runtime.records import RecordsScope, create_record
    from tenants import actions
    from tenants.callers import caller_for
    from tenants.scoping import access_user

    tokens = {}
    for slug in ("flood", "quiet"):
        tenant = actions.create_tenant(slug, acting_user=None)
        actions.add_member(tenant, "alice", acting_user=None)
        deploy_bundle(tenant, bundle_from_mapping(MANIFEST, HANDLERS), acting_user=None)
        tokens[slug] = [
            actions.issue_token(tenant, "alice", acting_user=None)[1] for _ in range(TOKENS_PER_TENANT)
        ]
        if slug == "flood":  # large records for the heavy-read case
            app = App.objects.for_tenant(tenant).get(name="fair")
            scope = RecordsScope(
                tenant.pk,
                app.pk,
                compiled_version(app.active_version),
                caller_for(tenant, access_user("alice")),
            )
            for n in range(records):
                create_record(scope, "docs", {"n": n, "text": "x" * 250_000})
            tokens["flood_read_only"] = [
                actions.issue_token(tenant, "alice", read_only=True, acting_user=None)[1] for _ in range(8)
            ]
    return tokens


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    from _setup import ROOT

    args = [sys.executable, "manage.py", "serve", "--port", str(port)]
    # Refusals and sandbox queue timeouts are logged per call: keep that out of the figures.
    log = open(os.path.join(os.environ["PLATFORM_VAR_DIR"], "server.log"), "w")
    proc = subprocess.Popen(args, cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server on port {port} did not start")


@contextlib.contextmanager
def flooding(kind: str, base: str, tokens: list[str], clients: int):
    """A child process flooding tenant "flood"; yields a dict filled with its counts when it stops."""
    args = [sys.executable, __file__, "--flood", kind, base, ",".join(tokens), str(clients)]
    child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    counts: dict = {}
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the flooder did not start")
        yield counts
    finally:
        child.stdin.close()  # the flooder's signal to stop
        out = child.stdout.read()
        child.wait(60)
        counts.update(json.loads(out.strip().splitlines()[-1]) if out.strip() else {})


async def timed_calls(call, calls: int) -> list[float]:
    for _ in range(5):  # warm up
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def quiet_mcp(base: str, token: str, calls: int) -> list[float]:
    http, client = mcp_client(f"{base}/t/quiet/mcp", token)
    async with http, client:
        await client.list_tools()

        async def call():
            result = await client.call_tool("quiet_fair_ping", {})
            assert not result.is_error, result

        return await timed_calls(call, calls)


async def create_task(client, name: str) -> dict:
    """A task-augmented tools/call (the SDK client has the types, not the helper); the raw result."""
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments={}, task=types.TaskMetadata())
    )
    return await client.session.send_request(request, RAW)


async def quiet_task(base: str, token: str, calls: int) -> list[float]:
    """Create the quiet tenant's trivial task and poll it (every 20 ms) until it has completed."""
    http, client = mcp_client(f"{base}/t/quiet/mcp", token)
    async with http, client:
        await client.list_tools()

        async def call():
            created = await create_task(client, "quiet_fair_quick")
            task_id = created["task"]["taskId"]
            with anyio.fail_after(120):
                while True:
                    task = await client.session.send_request(
                        types.GetTaskRequest(params={"taskId": task_id}), RAW
                    )
                    if task["status"] != "working":
                        assert task["status"] == "completed", task
                        return
                    await anyio.sleep(0.02)

        return await timed_calls(call, calls)


async def quiet_front(base: str, token: str, calls: int) -> list[float]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:

        async def call():
            response = await http.get(f"{base}/t/quiet/apps/fair/ping")
            assert response.status_code == 200, response.text

        return await timed_calls(call, calls)


def report(title: str, idle: list[float], flooded: list[float], counts: dict) -> bool:
    from _setup import summary

    ratio = statistics.median(flooded) / statistics.median(idle)
    print(title)
    print(f"    quiet tenant idle (baseline)   {summary(idle)}   1.00x")
    print(f"    quiet tenant during the flood  {summary(flooded)}   {ratio:5.2f}x (aim <= 2x)")
    done, refused, failed = (counts.get(key, 0) for key in ("done", "refused", "failed"))
    print(f"    flood tenant: {done} slow calls done, {refused} refused as busy, {failed} failed")
    return ratio <= 2


def measure(args: argparse.Namespace) -> int:
    from _setup import setup_django

    setup_django()
    cases = set(args.cases.split(","))
    tokens = seed(args.records if "e" in cases else 0)
    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    quiet = tokens["quiet"][0]
    ok = True
    try:
        if "a" in cases:
            idle = anyio.run(quiet_mcp, base, quiet, args.calls)
            with flooding("mcp", base, tokens["flood"], args.clients) as counts:
                flooded = anyio.run(quiet_mcp, base, quiet, args.calls)
            ok &= report(
                f"(a) tools/call of a trivial tool, {args.clients} MCP clients flooding",
                idle,
                flooded,
                counts,
            )
        if "b" in cases:
            idle = anyio.run(quiet_front, base, quiet, args.calls)
            with flooding("front", base, tokens["flood"], args.clients) as counts:
                flooded = anyio.run(quiet_front, base, quiet, args.calls)
            ok &= report(
                f"(b) front-end GET of a trivial route, {args.clients} HTTP clients flooding",
                idle,
                flooded,
                counts,
            )
        if "c" in cases:
            idle = anyio.run(quiet_mcp, base, quiet, args.calls)
            with flooding("fanout", base, tokens["flood"][:1], 1) as counts:
                flooded = anyio.run(quiet_mcp, base, quiet, args.calls)
            ok &= report(
                "(c) tools/call of a trivial tool, one call of flood fanning out 100 runs a run",
                idle,
                flooded,
                counts,
            )
        if "d" in cases:
            idle = anyio.run(quiet_task, base, quiet, args.calls)
            with flooding("tasks", base, tokens["flood"], TOKENS_PER_TENANT) as counts:
                flooded = anyio.run(quiet_task, base, quiet, args.calls)
            ok &= report(
                f"(d) a trivial task to completion, {TOKENS_PER_TENANT} clients of flood creating 3 s tasks",
                idle,
                flooded,
                counts,
            )
        if "e" in cases:
            idle = anyio.run(quiet_mcp, base, quiet, args.calls)
            with flooding("reads", base, tokens["flood_read_only"], 8) as counts:
                flooded = anyio.run(quiet_mcp, base, quiet, args.calls)
            ok &= report(
                f"(e) tools/call of a trivial tool, 8 read-only clients of flood reading "
                f"{args.records} x 250 KB records",
                idle,
                flooded,
                counts,
            )
    finally:
        server.terminate()
        try:
            # A graceful stop lets the flood's queued requests finish (each may wait out its slot).
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    print(f"    (server log: {os.path.join(os.environ['PLATFORM_VAR_DIR'], 'server.log')})")
    return 0 if ok else 1


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--flood":
        kind, base, tokens, clients = sys.argv[2:6]
        asyncio.run(flood(kind, base, tokens.split(","), int(clients)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100, help="flooding clients")
    parser.add_argument("--calls", type=int, default=40, help="timed calls of the quiet tenant per phase")
    parser.add_argument("--cases", default="a,b,c,d,e", help="which cases to run (a,b,c,d,e)")
    parser.add_argument("--records", type=int, default=60, help="250 KB records of flood for case (e)")
    return measure(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
