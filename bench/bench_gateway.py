"""MCP gateway benchmarks against the SDK's own minimal server, on loopback, in one run.

Every figure is printed next to the baseline measured in the same run, as a ratio, with the
server's CPU time per request beside it (steadier than wall time on a shared machine). The
servers run side by side and are measured in alternating rounds, so load from elsewhere hits
both alike; the load average is printed at the start and the end.

- Figure 1: tool calls per second, 16 concurrent clients, one server process: a trivial app tool
  (through the handler sandbox at the strongest tier the host has) and a built-in records tool,
  against the SDK's minimal server answering a trivial tool.
- Figure 2: sequential tools/call p50 of the app tool against the SDK's; the same route through
  the front-end path against the MCP call.
- Figure 4: a complete tools/list (all pages) of a tenant of 5,000 app tools for one caller,
  against the SDK's server listing 5,000 tools (in one page: it has no pagination).
- Figure 5: memory (PSS) of the platform's whole process tree after 16 clients called the tool of ONE
  app, against FastMCP's process with its one tool; and, reported beside it, the tree and each warm
  sandbox worker after 16 clients called tools of 5 apps. Each is read from a fresh server process
  serving a small tenant of its own (``mem``), so no other figure's catalog (the 5,009-tool tenant
  listed in figure 4) is in it.
- Figure 6: calls per second of ``serve --workers 2`` against ``--workers 1`` (both stateless:
  several workers need it); with ``--replicas-database``, two ``serve`` replicas on PostgreSQL and
  Redis behind haproxy configured as docs/production.md says, against one replica behind the same haproxy.

FastMCP (``fastmcp_server.py``, in a venv of its own, see ``_setup.fastmcp_python``) is a peer in
figures 1, 2, 4 and 5: an unisolated ``echo`` tool behind its bearer-token check; ``--no-fastmcp``
leaves it out. Figure 4 also lists about 1,000 tools on each server: the SDK's, FastMCP's and a
tenant of one 1,000-tool app.

Every client is the same bare Streamable HTTP client (``RawSession``), so client-side cost is
alike for both sides and small.

    .venv/bin/python bench/bench_gateway.py [--rounds 3] [--no-fastmcp]
        [--replicas-database postgres://USER@HOST/DB --replicas-redis redis://HOST/N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from _setup import ROOT, fastmcp_python, pss_kib, setup_django, summary

setup_django()

import anyio  # noqa: E402
import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import bundle_from_mapping  # noqa: E402
from mcp_gateway.tools.catalog.builtin_records import records_create  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.callers import caller_for  # noqa: E402
from tests.support.cluster import Balancer  # noqa: E402

CONCURRENCY = 16
CONCURRENT_CALLS = 400
SEQUENTIAL_CALLS = 200
FILLER_APPS, FILLER_TOOLS = 5, 1000
APP_TOOL, RECORDS_TOOL, SDK_TOOL = "bench_ping_app_ping", "bench_records_get", "ping"
# The same tool in an app with "isolation": "call": a fresh sandbox child per call, no warm worker.
PER_CALL_TOOL = "bench_ping_call_ping"
LEGACY = "2025-11-25"
FASTMCP_TOOL = "echo"
LIST_TOOLS = 1000  # the peers' listing figure: about 1,000 tools on each server
MEMORY_APPS = 5  # figure 5: the clients call a tool of each of this many apps (and of one, against FastMCP)


# --- servers -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Served:
    """One server process on a free port, its log in the scratch folder."""

    name: str
    proc: subprocess.Popen
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """CPU time of the server and of the processes it forked and reaped (handler children)."""
        total = 0.0
        for pid in [self.proc.pid, *_children(self.proc.pid)]:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        return total

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _children(pid: int) -> list[int]:
    # Every thread's children: the handler sandbox's zygote is forked by a gateway thread, not the
    # main one, and its CPU (with its reaped children's) belongs to the server's.
    found = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in listing.read_text().split():
                found += [int(child), *_children(int(child))]
    return found


def _ticks(pid: int) -> int:
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    return 0


@dataclass
class Memory:
    """PSS of a server's whole process tree, and of its warm sandbox workers (KiB)."""

    tree_kib: int
    processes: int
    server_kib: int  # the server process alone
    workers_kib: list[int] = field(default_factory=list)


def memory_of(served: Served, warm_workers: int = 0) -> Memory:
    """The tree's PSS; with ``warm_workers``, the PSS of that many workers: the zygote's children that
    spent the most CPU (spares forked ahead of a call have run nothing yet)."""
    tree = [served.proc.pid, *_children(served.proc.pid)]
    memory = Memory(sum(pss_kib(pid) for pid in tree), len(tree), pss_kib(served.proc.pid))
    if warm_workers:
        families = {pid: [int(c) for c in _direct_children(pid)] for pid in tree}
        zygote = max(families, key=lambda pid: len(families[pid]))
        busiest = sorted(families[zygote], key=_ticks, reverse=True)[:warm_workers]
        memory.workers_kib = sorted(pss_kib(pid) for pid in busiest)
    return memory


def _direct_children(pid: int) -> list[str]:
    found = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += listing.read_text().split()
    return found


def start(name: str, args: list[str], env: dict[str, str], scratch: Path) -> Served:
    port = free_port()
    log = scratch / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [a.replace("{port}", str(port)) for a in args], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited:\n{log.read_text()[-3000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return Served(name, proc, port, log)
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{name} did not start")


def platform_env(scratch: Path, **extra: str) -> dict[str, str]:
    """Production settings (no DEBUG), the bench's database, the strongest sandbox tier available."""
    env = {k: v for k, v in os.environ.items() if k != "BENCH_READY"}
    env.update(
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(40),
        SANDBOX_MIN_TIER="3",
        JOBS_IN_PROCESS_CLOCK="false",
        LOG_LEVEL="INFO",
        PLATFORM_VAR_DIR=str(scratch / "var"),
    )
    env.update(extra)  # a replica's own var dir and shared SECRET_KEY, the database, Redis
    return env


def serve_platform(name: str, scratch: Path, workers: int = 1, **extra: str) -> Served:
    args = [
        sys.executable,
        "manage.py",
        "serve",
        "--port",
        "{port}",
        "--no-access-log",
        "--workers",
        str(workers),
    ]
    return start(name, args, platform_env(scratch, **extra), scratch)


def serve_sdk(name: str, scratch: Path, tools: int) -> Served:
    script = str(Path(__file__).parent / "minimal_sdk_server.py")
    return start(name, [sys.executable, script, "{port}", str(tools)], os.environ.copy(), scratch)


def serve_fastmcp(name: str, scratch: Path, token: str, tools: int) -> Served:
    script = str(Path(__file__).parent / "fastmcp_server.py")
    args = [str(fastmcp_python()), script, "{port}", token, str(tools)]
    return start(name, args, os.environ.copy(), scratch)


def sandbox_tier(served: Served) -> str:
    found = re.search(r"Handler sandbox: isolation (.+?)[,(]", served.log.read_text(errors="replace"))
    return found.group(1).strip() if found else "unknown"


# --- a bare client -------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Http11:
    """One keep-alive HTTP/1.1 connection in a few lines of asyncio.

    The client shares the machine with the servers: an httpx client spent as much CPU per call as
    the SDK's server, which flattened every ratio and left a second worker no core to run on.
    """

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path or "/"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def send(
        self, method: str, headers: dict[str, str], body: bytes = b"", path: str | None = None
    ) -> Answer:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        lines = [f"{method} {path or self.path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()] + [f"Content-Length: {len(body)}", "", ""]
        self._writer.write("\r\n".join(lines).encode("latin-1") + body)
        return await self._answer()

    async def _answer(self) -> Answer:
        head = (await self._reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        headers = {}
        for line in head[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16):
                body += (await self._reader.readexactly(size + 2))[:-2]
            await self._reader.readuntil(b"\r\n")
        else:
            body = await self._reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection") == "close":
            await self.close()
        return Answer(status, headers, body)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = self._reader = None


class RawSession:
    """What any Streamable HTTP client must do (initialize, then POST with the session id), nothing more."""

    def __init__(self, url: str, token: str | None):
        self.http = Http11(url)
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.session: str | None = None
        self._id = 0

    async def open(self) -> RawSession:
        hello = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        answer = await self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        self.session = answer.headers.get("mcp-session-id")
        if self.session is not None:
            self.headers.update({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY})
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def close(self) -> None:
        if self.session is not None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                await self.http.send("DELETE", self.headers)
        await self.http.close()

    async def request(self, method: str, params: dict | None = None) -> dict:
        self._id += 1
        message = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        answer = _first_message(await self._post(message))
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def call(self, name: str, arguments: dict) -> None:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{name} failed: {result['content']}")

    async def list_all(self) -> tuple[int, int]:
        """(tools, pages) of a complete listing."""
        tools, pages, cursor = 0, 0, None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools, pages = tools + len(result["tools"]), pages + 1
            if (cursor := result.get("nextCursor")) is None:
                return tools, pages

    async def _post(self, message: dict) -> Answer:
        answer = await self.http.send("POST", self.headers, json.dumps(message).encode())
        if answer.status >= 400:
            raise RuntimeError(f"HTTP {answer.status}: {answer.body[:300]!r}")
        return answer


def _first_message(answer: Answer) -> dict:
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        for line in answer.body.decode().splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
        raise RuntimeError("an event stream without a message")
    return json.loads(answer.body)


@contextlib.asynccontextmanager
async def sessions(url: str, token: str | None, count: int):
    opened = [await RawSession(url, token).open() for _ in range(count)]
    try:
        yield opened
    finally:
        for session in opened:
            await session.close()


# --- measurements --------------------------------------------------------------------------------


@dataclass
class Figure:
    """Samples of one measured thing: a rate or a duration, and the server CPU per unit of work."""

    samples: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)


async def throughput(
    served: Served, url: str, token: str | None, tool: str, arguments: dict
) -> tuple[float, float, float]:
    """(calls/s, server CPU ms per call, this client's CPU ms per call) of CONCURRENT_CALLS calls by
    CONCURRENCY sessions. The server's CPU includes its handler sandbox's."""
    async with sessions(url, token, CONCURRENCY) as opened:
        for session in opened:
            await session.call(tool, arguments)  # warm: the caller is cached, the catalog built
        remaining = CONCURRENT_CALLS

        async def worker(session: RawSession) -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await session.call(tool, arguments)

        cpu, started, mine = served.cpu_seconds(), time.perf_counter(), time.process_time()
        async with anyio.create_task_group() as tasks:
            for session in opened:
                tasks.start_soon(worker, session)
        elapsed, cpu = time.perf_counter() - started, served.cpu_seconds() - cpu
        mine = time.process_time() - mine
    return CONCURRENT_CALLS / elapsed, cpu * 1000 / CONCURRENT_CALLS, mine * 1000 / CONCURRENT_CALLS


async def latencies(
    served: Served, url: str, token: str | None, tool: str, n: int
) -> tuple[list[float], float]:
    """Sequential call latencies (ms) and server CPU ms per call."""
    async with sessions(url, token, 1) as (session,):
        for _ in range(20):
            await session.call(tool, {})
        samples, cpu = [], served.cpu_seconds()
        for _ in range(n):
            started = time.perf_counter()
            await session.call(tool, {})
            samples.append((time.perf_counter() - started) * 1000)
        cpu = served.cpu_seconds() - cpu
    return samples, cpu * 1000 / n


async def front_end_latencies(served: Served, token: str, n: int) -> tuple[list[float], float]:
    """The app tool's route through the front-end path: latencies (ms) and server CPU ms per call."""
    http = Http11(f"{served.base}/t/bench/apps/ping_app/ping")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        for _ in range(20):
            await _ok(http.send("GET", headers))
        samples, cpu = [], served.cpu_seconds()
        for _ in range(n):
            started = time.perf_counter()
            await _ok(http.send("GET", headers))
            samples.append((time.perf_counter() - started) * 1000)
        cpu = served.cpu_seconds() - cpu
    finally:
        await http.close()
    return samples, cpu * 1000 / n


async def _ok(sending: Awaitable[Answer]) -> None:
    answer = await sending
    if answer.status != 200:
        raise RuntimeError(f"HTTP {answer.status}: {answer.body[:300]!r}")


async def listing(served: Served, url: str, token: str | None) -> tuple[float, float, int, int]:
    """(ms, server CPU ms, tools, pages) of one complete tools/list, after one untimed listing."""
    async with sessions(url, token, 1) as (session,):
        await session.list_all()
        cpu, started = served.cpu_seconds(), time.perf_counter()
        tools, pages = await session.list_all()
        elapsed, cpu = time.perf_counter() - started, served.cpu_seconds() - cpu
    return elapsed * 1000, cpu * 1000, tools, pages


async def warm_workers(served: Served) -> int:
    """The server's warm sandbox workers, from its /metrics."""
    http = Http11(f"{served.base}/metrics")
    try:
        answer = await http.send("GET", {})
    finally:
        await http.close()
    found = re.search(rb"^lcp_sandbox_warm_workers (\S+)$", answer.body, re.M)
    return int(float(found.group(1))) if found else 0


async def memory_round(served: Served, url: str, token: str, apps: int) -> tuple[Memory, int]:
    """PSS after CONCURRENCY clients called the tool of each of ``apps`` apps of tenant ``mem``, read
    while they are connected; and the warm workers the server keeps."""
    tools = [f"mem_app_{n}_tool_0" for n in range(apps)]
    async with sessions(url, token, CONCURRENCY) as opened:

        async def worker(index: int, session: RawSession) -> None:
            for _ in range(10):
                await session.call(tools[index % apps], {})

        async with anyio.create_task_group() as tasks:
            for index, session in enumerate(opened):
                tasks.start_soon(worker, index, session)
        workers = await warm_workers(served)
        return memory_of(served, workers), workers


async def fresh_memory(scratch: Path, token: str, apps: int) -> tuple[Memory, int]:
    """``memory_round`` of a server started for it, so it holds nothing but what these calls need."""
    served = await anyio.to_thread.run_sync(serve_platform, f"memory-{apps}", scratch)
    try:
        return await memory_round(served, f"{served.base}/t/mem/mcp", token, apps)
    finally:
        served.stop()


async def alternate(
    rounds: int, measures: dict[str, Callable[[], Awaitable[tuple]]]
) -> dict[str, list[tuple]]:
    """Run each measure once per round, in turn, so drifting load hits every one alike."""
    results: dict[str, list[tuple]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            results[name].append(await measure())
    return results


# --- the tenant ----------------------------------------------------------------------------------


PING = "def handle(request):\n    return {'pong': True}\n"


def filler_manifest(n: int, tools: int) -> dict:
    """App ``app_<n>`` of ``tools`` filler tools, all on one trivial route."""
    return {
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
                for i in range(tools)
            ]
        },
    }


def seed_big() -> str:
    """Tenant big: one app of LIST_TOOLS tools (figure 4 beside the peers); a member's token."""
    tenant = actions.create_tenant("big", acting_user=None)
    actions.add_member(tenant, "alice", roles=["staff"], acting_user=None)
    bundle = bundle_from_mapping(filler_manifest(0, LIST_TOOLS), {"server/ping.py": PING})
    deploy_bundle(tenant, bundle, acting_user=None)
    return actions.issue_token(tenant, "alice", acting_user=None)[1]


def seed_memory() -> str:
    """Tenant mem: MEMORY_APPS apps of one trivial tool each (figure 5); a member's token."""
    tenant = actions.create_tenant("mem", acting_user=None)
    actions.add_member(tenant, "alice", roles=["staff"], acting_user=None)
    for n in range(MEMORY_APPS):
        bundle = bundle_from_mapping(filler_manifest(n, 1), {"server/ping.py": PING})
        deploy_bundle(tenant, bundle, acting_user=None)
    return actions.issue_token(tenant, "alice", acting_user=None)[1]


def seed(fillers: bool = True) -> tuple[str, str]:
    """Tenant bench: the ping app, 5,000 filler tools (unless not ``fillers``), one record; a member's
    token and the record id."""
    tenant = actions.create_tenant("bench", acting_user=None)
    actions.add_member(tenant, "alice", roles=["staff"], acting_user=None)
    ping = {
        "name": "ping_app",
        "collections": {"items": {"schema": {"type": "object"}, "read": "user", "write": "user"}},
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
    deploy_bundle(tenant, bundle_from_mapping(ping, {"server/ping.py": PING}), acting_user=None)
    per_call = {**ping, "name": "ping_call", "isolation": "call", "collections": {}}
    deploy_bundle(tenant, bundle_from_mapping(per_call, {"server/ping.py": PING}), acting_user=None)
    for n in range(FILLER_APPS if fillers else 0):
        filler = bundle_from_mapping(filler_manifest(n, FILLER_TOOLS), {"server/ping.py": PING})
        deploy_bundle(tenant, filler, acting_user=None)
    caller = caller_for(tenant, tenant.memberships.get().user)
    record = records_create(tenant, caller, {"app": "ping_app", "collection": "items", "data": {"n": 1}})
    _, token = actions.issue_token(tenant, "alice", acting_user=None)
    return token, record["id"]


# --- report --------------------------------------------------------------------------------------


def ratio_line(label: str, value: str, ratio: float, cpu: float, goal: str = "") -> str:
    line = f"    {label:44s} {value:>12s}   {ratio:5.2f}x   {cpu:6.2f} ms CPU"
    return f"{line}   goal {goal}" if goal else line


@dataclass
class Group:
    """Several processes measured as one: replicas and the balancer in front of them."""

    members: list[Served]

    def cpu_seconds(self) -> float:
        return sum(member.cpu_seconds() for member in self.members)


def ensure_database(url: str) -> None:
    """Create the PostgreSQL database of ``url`` if its server does not have it yet."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def seed_database(url: str) -> tuple[str, str]:
    """The ping app seeded into the database of ``url`` (flushed first) by this script in a process of its
    own (this one's Django is on the scratch database); a member's token and the record id."""
    ensure_database(url)
    env = {k: v for k, v in os.environ.items() if k != "BENCH_READY"}
    env["BENCH_DATABASE_URL"] = url
    out = subprocess.run(
        [sys.executable, __file__, "--seed-only"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    token, record_id = json.loads(out.stdout.strip().splitlines()[-1])
    return token, record_id


async def replica_rounds(rounds: int, scratch: Path, database: str, redis: str) -> dict[str, list[tuple]]:
    """Calls/s of the app tool through haproxy (docs/production.md's configuration) in front of one
    replica and in front of two, in alternating rounds; the CPU counted is the replicas' and haproxy's."""
    token, _ = await anyio.to_thread.run_sync(seed_database, database)
    shared = {
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": redis,
        "RATE_LIMIT_REDIS_URL": redis,
        "SECRET_KEY": secrets.token_urlsafe(40),
    }
    replicas = [
        serve_platform(f"replica-{n}", scratch, PLATFORM_VAR_DIR=str(scratch / f"replica-{n}"), **shared)
        for n in (1, 2)
    ]
    balancers: list[Balancer] = []
    try:
        for count in (1, 2):
            (scratch / f"haproxy-{count}").mkdir()
            balancer = Balancer(scratch / f"haproxy-{count}", [r.port for r in replicas[:count]])
            balancers.append(balancer)
            balancer.start()
        groups = [
            Group([*replicas[:count], Served("haproxy", b.process.proc, b.port, b.process.log_path)])
            for count, b in zip((1, 2), balancers, strict=True)
        ]
        return await alternate(
            rounds,
            {
                str(count): lambda count=count, group=group: throughput(
                    group, f"{balancers[count - 1].url}/t/bench/mcp", token, APP_TOOL, {}
                )
                for count, group in zip((1, 2), groups, strict=True)
            },
        )
    finally:
        for balancer in balancers:
            balancer.process.stop()
        for replica in replicas:
            replica.stop()


async def main(args: argparse.Namespace) -> None:
    rounds = args.rounds
    token, record_id = await anyio.to_thread.run_sync(seed)
    big_token = await anyio.to_thread.run_sync(seed_big)
    memory_token = await anyio.to_thread.run_sync(seed_memory)
    scratch = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    load_before = os.getloadavg()
    fast_token = secrets.token_urlsafe(24)
    servers = [
        platform := serve_platform("platform", scratch),
        sdk := serve_sdk("sdk", scratch, 1),
        sdk_many := serve_sdk("sdk-5000", scratch, FILLER_APPS * FILLER_TOOLS),
        sdk_1000 := serve_sdk("sdk-1000", scratch, LIST_TOOLS),
        one := serve_platform("stateless-1", scratch, MCP_STATELESS="true"),
        two := serve_platform("stateless-2", scratch, workers=2, MCP_STATELESS="true"),
    ]
    fast = fast_1000 = None
    if not args.no_fastmcp:
        servers += [
            fast := serve_fastmcp("fastmcp", scratch, fast_token, 1),
            fast_1000 := serve_fastmcp("fastmcp-1000", scratch, fast_token, LIST_TOOLS),
        ]
    try:
        url = f"{platform.base}/t/bench/mcp"
        big_url = f"{platform.base}/t/big/mcp"
        records_args = {"app": "ping_app", "collection": "items", "id": record_id}
        peers: dict[str, Callable[[], Awaitable[tuple]]] = {}
        if fast is not None:
            fast_url = f"{fast.base}/mcp"
            peers["fastmcp"] = lambda: throughput(fast, fast_url, fast_token, FASTMCP_TOOL, {})

        calls = await alternate(
            rounds,
            {
                "sdk": lambda: throughput(sdk, f"{sdk.base}/mcp", None, SDK_TOOL, {}),
                **peers,
                "app": lambda: throughput(platform, url, token, APP_TOOL, {}),
                "per_call": lambda: throughput(platform, url, token, PER_CALL_TOOL, {}),
                "records": lambda: throughput(platform, url, token, RECORDS_TOOL, records_args),
            },
        )
        peers = {}
        if fast is not None:
            peers["fastmcp"] = lambda: latencies(fast, fast_url, fast_token, FASTMCP_TOOL, SEQUENTIAL_CALLS)
        sequential = await alternate(
            rounds,
            {
                "sdk": lambda: latencies(sdk, f"{sdk.base}/mcp", None, SDK_TOOL, SEQUENTIAL_CALLS),
                **peers,
                "app": lambda: latencies(platform, url, token, APP_TOOL, SEQUENTIAL_CALLS),
                "per_call": lambda: latencies(platform, url, token, PER_CALL_TOOL, SEQUENTIAL_CALLS),
                "front": lambda: front_end_latencies(platform, token, SEQUENTIAL_CALLS),
            },
        )
        peers = {}
        if fast_1000 is not None:
            peers["fastmcp_1000"] = lambda: listing(fast_1000, f"{fast_1000.base}/mcp", fast_token)
        lists = await alternate(
            rounds,
            {
                "sdk": lambda: listing(sdk_many, f"{sdk_many.base}/mcp", None),
                "platform": lambda: listing(platform, url, token),
                "sdk_1000": lambda: listing(sdk_1000, f"{sdk_1000.base}/mcp", None),
                **peers,
                "platform_1000": lambda: listing(platform, big_url, big_token),
            },
        )
        memory = [await fresh_memory(scratch, memory_token, apps) for apps in (1, MEMORY_APPS)]
        fast_memory = memory_of(fast) if fast is not None else None
        workers = await alternate(
            rounds,
            {
                "1": lambda: throughput(one, f"{one.base}/t/bench/mcp", token, APP_TOOL, {}),
                "2": lambda: throughput(two, f"{two.base}/t/bench/mcp", token, APP_TOOL, {}),
            },
        )
        tier = sandbox_tier(platform)
    finally:
        for served in servers:
            served.stop()
    replicas = None
    if args.replicas_database and shutil.which("haproxy"):
        redis = args.replicas_redis or "redis://127.0.0.1:6379/0"
        replicas = await replica_rounds(rounds, scratch, args.replicas_database, redis)
    elif args.replicas_database:
        print("two replicas: skipped (haproxy is not installed: make system-deps)")
    report(rounds, tier, load_before, calls, sequential, lists, workers, (memory, fast_memory), replicas)


def _rates(results: list[tuple]) -> tuple[float, float]:
    """(median rate or duration, median server CPU ms) of alternating rounds."""
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def cpu_ceiling(label: str, results: list[tuple]) -> str:
    """What the machine's cores allow: the CPU of one call in every process (server, its sandbox,
    this client) and the calls/s that CPU would saturate every core at."""
    server, client = statistics.median(r[1] for r in results), statistics.median(r[2] for r in results)
    ceiling = (os.cpu_count() or 1) * 1000 / (server + client)
    return (
        f"    {label:44s} {server:5.2f} + {client:4.2f} ms CPU (server + client) a call:"
        f" the cores saturate at {ceiling:6.0f}/s"
    )


def sequential_line(label: str, results: list[tuple], p50_sdk: float) -> float:
    """Print one server's sequential latencies against the SDK's p50; returns its p50."""
    samples, cpu = _pooled(results)
    p50 = statistics.median(samples)
    print(f"    {label:23s} {summary(samples)}   {p50 / p50_sdk:5.2f}x   {cpu:6.2f} ms CPU")
    return p50


def _pooled(results: list[tuple]) -> tuple[list[float], float]:
    """(every latency of every round, median server CPU ms per call)."""
    return [x for samples, _ in results for x in samples], statistics.median(cpu for _, cpu in results)


def scaling(
    title: str, labels: tuple[str, str, str, str], results: dict[str, list[tuple]], goal: str, rows: list
) -> None:
    """Figure 6: two of something ("2") against one ("1"), each with the CPU that saturates the cores."""
    one, two, row_label, base_label = labels
    (one_rate, one_cpu), (two_rate, two_cpu) = _rates(results["1"]), _rates(results["2"])
    print(f"\n(6) {title}")
    print(ratio_line(f"{one} (baseline)", f"{one_rate:8.1f}/s", 1.0, one_cpu))
    print(
        ratio_line(
            two, f"{two_rate:8.1f}/s", two_rate / one_rate, two_cpu, goal if goal != "reported" else ""
        )
    )
    print(cpu_ceiling(one, results["1"]))
    print(cpu_ceiling(two, results["2"]))
    rows.append(
        (row_label, f"{two_rate:.0f}/s", f"{base_label}: {one_rate:.0f}/s", two_rate / one_rate, goal)
    )


def report(rounds, tier, load_before, calls, sequential, lists, workers, memory, replicas) -> None:
    load_after = os.getloadavg()
    loads = f"{load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end"
    print(f"machine: {os.cpu_count()} cores; load average {loads}")
    print(f"sandbox tier of the app tool: {tier}; medians of {rounds} alternating rounds\n")
    rows = []

    (sdk_rate, sdk_cpu), (app_rate, app_cpu) = _rates(calls["sdk"]), _rates(calls["app"])
    records_rate, records_cpu = _rates(calls["records"])
    print(f"(1) tool calls/s, {CONCURRENCY} concurrent clients, {CONCURRENT_CALLS} calls, one server process")
    print(ratio_line("SDK minimal server, trivial tool (baseline)", f"{sdk_rate:8.1f}/s", 1.0, sdk_cpu))
    print(
        ratio_line(
            "platform, trivial app tool", f"{app_rate:8.1f}/s", app_rate / sdk_rate, app_cpu, ">= 0.6x"
        )
    )
    per_call_rate, per_call_cpu = _rates(calls["per_call"])
    print(
        ratio_line(
            'the same, "isolation": "call"', f"{per_call_rate:8.1f}/s", per_call_rate / sdk_rate, per_call_cpu
        )
    )
    print(
        ratio_line(
            "platform, built-in records_get",
            f"{records_rate:8.1f}/s",
            records_rate / sdk_rate,
            records_cpu,
            ">= 1.0x",
        )
    )
    fast_rate = None
    if "fastmcp" in calls:
        fast_rate, fast_cpu = _rates(calls["fastmcp"])
        print(
            ratio_line(
                "FastMCP, echo (bearer auth, unisolated)",
                f"{fast_rate:8.1f}/s",
                fast_rate / sdk_rate,
                fast_cpu,
            )
        )
        print(
            ratio_line(
                "platform app tool / FastMCP echo",
                f"{app_rate:8.1f}/s",
                app_rate / fast_rate,
                app_cpu,
                ">= 1.0x",
            )
        )
    labels = [("SDK", "sdk"), ("app tool", "app"), ("per call", "per_call"), ("records_get", "records")]
    labels += [("FastMCP echo", "fastmcp")] if "fastmcp" in calls else []
    for label, name in labels:
        print(cpu_ceiling(label, calls[name]))
    baseline = f"SDK minimal server {sdk_rate:.0f}/s"
    rows.append(
        (
            f"1. calls/s, 16 clients, app tool ({tier})",
            f"{app_rate:.0f}/s",
            baseline,
            app_rate / sdk_rate,
            ">= 0.6x",
        )
    )
    rows.append(
        (
            f'1. the same, "isolation": "call" ({tier})',
            f"{per_call_rate:.0f}/s",
            baseline,
            per_call_rate / sdk_rate,
            "reported",
        )
    )
    if fast_rate is not None:
        rows.append(
            (
                f"1. calls/s, 16 clients, app tool ({tier}), against FastMCP",
                f"{app_rate:.0f}/s, {app_cpu:.2f} ms CPU",
                f"FastMCP echo {fast_rate:.0f}/s, {fast_cpu:.2f} ms CPU",
                app_rate / fast_rate,
                ">= 1.0x",
            )
        )
    rows.append(
        (
            "1. calls/s, 16 clients, records_get",
            f"{records_rate:.0f}/s",
            baseline,
            records_rate / sdk_rate,
            ">= 1.0x",
        )
    )

    (sdk_lat, sdk_cpu), (app_lat, app_cpu) = _pooled(sequential["sdk"]), _pooled(sequential["app"])
    front_lat, front_cpu = _pooled(sequential["front"])
    p50_sdk, p50_app, p50_front = (statistics.median(x) for x in (sdk_lat, app_lat, front_lat))
    print(f"\n(2) sequential tools/call, {SEQUENTIAL_CALLS} calls x {rounds} rounds")
    print(f"    SDK minimal server      {summary(sdk_lat)}   1.00x   {sdk_cpu:6.2f} ms CPU")
    print(
        f"    platform, app tool      {summary(app_lat)}   {p50_app / p50_sdk:5.2f}x   {app_cpu:6.2f} ms CPU"
    )
    sequential_line("per call isolation", sequential["per_call"], p50_sdk)
    print(f"    front-end path, route   {summary(front_lat)}   {p50_front / p50_app:5.2f}x of the MCP call")
    if "fastmcp" in sequential:
        p50_fast = sequential_line("FastMCP, echo", sequential["fastmcp"], p50_sdk)
        print(f"    platform app tool / FastMCP echo p50: {p50_app / p50_fast:5.2f}x")
        rows.append(
            (
                "2. sequential tools/call p50, app tool, against FastMCP",
                f"{p50_app:.1f} ms",
                f"FastMCP echo {p50_fast:.1f} ms",
                p50_app / p50_fast,
                "reported",
            )
        )
    rows.append(
        (
            "2. sequential tools/call p50, app tool",
            f"{p50_app:.1f} ms",
            f"SDK {p50_sdk:.1f} ms",
            p50_app / p50_sdk,
            "<= 2.5x",
        )
    )
    rows.append(
        (
            "2. front-end path p50, same route",
            f"{p50_front:.1f} ms",
            f"MCP call {p50_app:.1f} ms",
            p50_front / p50_app,
            "<= 1.1x",
        )
    )

    (sdk_ms, sdk_cpu), (platform_ms, platform_cpu) = _rates(lists["sdk"]), _rates(lists["platform"])
    _, _, tools, pages = lists["platform"][-1]
    _, _, sdk_tools, _ = lists["sdk"][-1]
    print(
        f"\n(4) complete tools/list, one caller: {tools} tools, {pages} pages; the SDK: {sdk_tools}, one page"
    )
    print(ratio_line("SDK server listing its tools (baseline)", f"{sdk_ms:8.1f} ms", 1.0, sdk_cpu))
    print(
        ratio_line(
            "platform, all pages", f"{platform_ms:8.1f} ms", platform_ms / sdk_ms, platform_cpu, "<= 0.3x"
        )
    )
    rows.append(
        (
            f"4. complete tools/list, {tools} tools",
            f"{platform_ms:.0f} ms, {pages} pages",
            f"SDK, {sdk_tools} tools: {sdk_ms:.0f} ms",
            platform_ms / sdk_ms,
            "<= 0.3x",
        )
    )

    (sdk_1k, sdk_1k_cpu), (platform_1k, platform_1k_cpu) = (
        _rates(lists["sdk_1000"]),
        _rates(lists["platform_1000"]),
    )
    _, _, tools_1k, pages_1k = lists["platform_1000"][-1]
    print(
        f"\n(4) complete tools/list of about {LIST_TOOLS} tools: the platform {tools_1k} tools in "
        f"{pages_1k} pages"
    )
    print(ratio_line(f"SDK server, {LIST_TOOLS} tools (baseline)", f"{sdk_1k:8.1f} ms", 1.0, sdk_1k_cpu))
    print(ratio_line("platform, all pages", f"{platform_1k:8.1f} ms", platform_1k / sdk_1k, platform_1k_cpu))
    base_1k = f"SDK {sdk_1k:.0f} ms"
    if "fastmcp_1000" in lists:
        fast_1k, fast_1k_cpu = _rates(lists["fastmcp_1000"])
        print(ratio_line(f"FastMCP, {LIST_TOOLS} tools", f"{fast_1k:8.1f} ms", fast_1k / sdk_1k, fast_1k_cpu))
        print(f"    platform / FastMCP: {platform_1k / fast_1k:5.2f}x")
        base_1k += f", FastMCP {fast_1k:.0f} ms ({platform_1k / fast_1k:.2f}x)"
    rows.append(
        (
            f"4. complete tools/list, {tools_1k} tools",
            f"{platform_1k:.1f} ms, {pages_1k} pages",
            base_1k,
            platform_1k / sdk_1k,
            "reported",
        )
    )

    (one_app, _), (five_apps, kept) = memory[0]
    fast_memory = memory[1]
    per_worker = five_apps.workers_kib
    worker_text = (
        f"{statistics.median(per_worker) / 1024:.1f} MiB per warm worker ({min(per_worker) / 1024:.1f}-"
        f"{max(per_worker) / 1024:.1f}, {kept} workers)"
        if per_worker
        else "no warm worker found"
    )
    print(f"\n(5) memory (PSS) at {CONCURRENCY} clients, each read from a fresh server")
    print(
        f"    platform, one app: the whole tree {one_app.tree_kib / 1024:.1f} MiB in {one_app.processes}"
        f" processes (the server process {one_app.server_kib / 1024:.1f} MiB)"
    )
    print(
        f"    platform, {MEMORY_APPS} apps: the whole tree {five_apps.tree_kib / 1024:.1f} MiB in "
        f"{five_apps.processes} processes (the server process {five_apps.server_kib / 1024:.1f} MiB); "
        f"{worker_text}"
    )
    if fast_memory is not None:
        ratio = one_app.tree_kib / fast_memory.tree_kib
        print(
            f"    FastMCP, one tool: {fast_memory.tree_kib / 1024:.1f} MiB in {fast_memory.processes} "
            "process(es);"
            f" platform with one app / FastMCP {ratio:.2f}x (goal <= 2x)"
        )
        fast_text = f"FastMCP, one tool: {fast_memory.tree_kib / 1024:.0f} MiB"
        rows.append(
            (
                f"5. PSS of the process tree, {CONCURRENCY} clients, one app",
                f"{one_app.tree_kib / 1024:.0f} MiB ({one_app.processes} processes, the server "
                f"{one_app.server_kib / 1024:.0f} MiB)",
                fast_text,
                ratio,
                "<= 2x",
            )
        )
        rows.append(
            (
                f"5. PSS of the process tree, {CONCURRENCY} clients, {MEMORY_APPS} apps",
                f"{five_apps.tree_kib / 1024:.0f} MiB ({five_apps.processes} processes, the server "
                f"{five_apps.server_kib / 1024:.0f} MiB); {worker_text}",
                fast_text,
                five_apps.tree_kib / fast_memory.tree_kib,
                "reported",
            )
        )

    scaling(
        f"serve --workers 2 against 1 (MCP_STATELESS=true), trivial app tool, {CONCURRENCY} clients",
        ("one worker", "two workers", "6. calls/s, serve --workers 2", "--workers 1"),
        workers,
        ">= 1.6x",
        rows,
    )
    if replicas is not None:
        scaling(
            f"two replicas (PostgreSQL, Redis) behind haproxy, against one behind it, {CONCURRENCY} clients",
            ("one replica", "two replicas", "6. calls/s, two replicas behind haproxy", "one replica"),
            replicas,
            "reported",
            rows,
        )

    print(f"\nPerformance rows ({os.cpu_count()} cores, load {load_before[0]:.1f}-{load_after[0]:.1f}):")
    print("| figure | platform | baseline (same run) | ratio | goal |")
    print("|---|---|---|---|---|")
    for figure, value, base, ratio, goal in rows:
        print(f"| {figure} | {value} | {base} | {ratio:.2f}x | {goal} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-fastmcp", action="store_true", help="leave FastMCP out (no venv made)")
    parser.add_argument(
        "--replicas-database",
        default=os.environ.get("BENCH_REPLICAS_DATABASE_URL"),
        help="PostgreSQL URL for figure 6's two replicas (its database is flushed); without it, no replicas",
    )
    parser.add_argument(
        "--replicas-redis",
        default=os.environ.get("BENCH_REPLICAS_REDIS_URL"),
        help="the replicas' Redis (Celery broker and rate limits), default redis://127.0.0.1:6379/0",
    )
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.seed_only:  # a replica database, for replica_rounds
        print(json.dumps(seed(fillers=False)))
    else:
        anyio.run(main, arguments)
