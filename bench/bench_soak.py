"""Soak through the load balancer: 16 MCP clients of both eras for 10 minutes. Errors 0, memory flat.

The production shape of ``tests/support/cluster.py``: a private PostgreSQL and Redis, ``--replicas``
``manage.py serve`` replicas, a Celery worker and beat, haproxy in front with docs/production.md's
configuration. Half the clients speak 2026-07-28 (stateless), half 2025-11-25 (a session each,
routed by its id); each, back to back for the whole run, calls in turn an app tool that reads
(``find_case``), one that writes (``create_case``), the built-in ``records_query`` and ``get_case``.
Printed: per minute, calls, errors, p50 and p99 latency (the first minute is the baseline the
others are compared with); the resident memory of every process of the cluster (each replica's
server and sandbox processes, the Celery worker and beat, haproxy, PostgreSQL, Redis) after the
warm-up and at the end; the errors seen. Loopback only; bounded by ``--minutes``.

    .venv/bin/python bench/bench_soak.py [--minutes 10] [--clients 16] [--replicas 2]

Exits 1 when any call failed.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from _setup import percentile  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.support.cluster import Cluster, remove, scratch_dir  # noqa: E402

ERAS = ("2026-07-28", "legacy")
CALL_SECONDS = 60.0


@dataclass
class Soak:
    url: str
    token: str
    started: float = 0.0
    deadline: float = float("inf")
    samples: list[tuple[float, float, bool]] = field(default_factory=list)  # (s into run, ms, ok)
    errors: Counter = field(default_factory=Counter)
    start_memory: dict = field(default_factory=dict)  # resident MiB per process once every client is ready

    def __post_init__(self) -> None:
        self._markers = itertools.count()

    async def client_loop(self, n: int, ready: anyio.Event, go: anyio.Event) -> None:
        era = ERAS[n % 2]
        headers = {"Authorization": f"Bearer {self.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(CALL_SECONDS)) as http:
            transport = streamable_http_client(f"{self.url}/t/acme/mcp", http_client=http)
            async with Client(transport, mode=era, read_timeout_seconds=CALL_SECONDS) as client:
                await client.list_tools()  # the client checks results against the schemas it listed
                created = await client.call_tool("acme_cases_create_case", {"client_name": f"soak {n}"})
                case_id = (created.structured_content or {}).get("id")
                ready.set()
                await go.wait()
                turn = 0
                while time.monotonic() < self.deadline:
                    await self.one_call(client, turn, case_id)
                    turn += 1

    async def one_call(self, client: Client, turn: int, case_id: str) -> None:
        kind = turn % 4
        if kind == 0:
            name, arguments = "acme_cases_find_case", {"query": "soak"}
        elif kind == 1:
            name, arguments = "acme_cases_create_case", {"client_name": f"soak-{next(self._markers)}"}
        elif kind == 2:
            name, arguments = "acme_records_query", {"app": "cases", "collection": "cases", "limit": 5}
        else:
            name, arguments = "acme_cases_get_case", {"case_id": case_id}
        began = time.perf_counter()
        try:
            result = await client.call_tool(name, arguments)
            failure = (
                (result.content[0].text if result.content else "isError")[:120] if result.is_error else None
            )
        except Exception as err:  # noqa: BLE001 - a soak counts every kind of failure, then goes on
            failure = f"{type(err).__name__}: {err}"[:120]
        done = time.perf_counter()
        self.samples.append((done - self.started, (done - began) * 1000, failure is None))
        if failure is not None:
            self.errors[f"{name}: {failure}"] += 1


def memory(cluster: Cluster) -> dict[str, float]:
    """Resident MiB of every process of the cluster (each started process and its descendants)."""
    roots = {f"replica{n}": r.proc for n, r in enumerate(cluster.replicas, start=1)}
    roots |= {p.name: p.proc for p in cluster.celery}
    roots["haproxy"] = cluster.balancer.process.proc
    roots["redis"] = cluster.redis.process.proc
    children = _children()
    found: dict[str, float] = {}
    for label, proc in roots.items():
        if proc is not None:
            for pid in _tree(proc.pid, children):
                found[f"{label} {pid} {_name(pid)}"] = _rss_mib(pid)
    for pid in _tree(_postmaster(cluster), children):
        found[f"postgres {pid} {_name(pid)}"] = _rss_mib(pid)
    return {name: mib for name, mib in found.items() if mib > 0}


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _tree(root: int | None, children: dict[int, list[int]]) -> list[int]:
    if root is None:
        return []
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return sorted(found)


def _postmaster(cluster: Cluster) -> int | None:
    try:
        return int((cluster.postgres.data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _name(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    text = " ".join(w.decode(errors="replace") for w in words if w)
    for marker in ("manage.py serve", "celery", "haproxy", "redis-server", "zygote", "postgres"):
        if marker in text:
            return marker.split()[-1] if marker != "manage.py serve" else "serve"
    return Path(words[0].decode(errors="replace")).name if words and words[0] else "?"


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def report(soak: Soak, options: argparse.Namespace, start: dict, end: dict) -> None:
    seconds = options.minutes * 60
    print(
        f"soak: {options.clients} MCP clients (half 2026-07-28, half 2025-11-25) through haproxy, "
        f"{options.replicas} replicas on PostgreSQL + Redis + Celery, {options.minutes:g} min, "
        "find_case / create_case / records_query / get_case in turn"
    )
    calls, failed = len(soak.samples), sum(1 for *_, ok in soak.samples if not ok)
    print(f"    calls {calls}   errors {failed}   {calls / seconds:8.1f} calls/s")
    print("    minute     calls  errors     p50 ms     p99 ms   p99 vs minute 1")
    base = None
    for minute in range(int(-(-seconds // 60))):
        window = [ms for at, ms, _ in soak.samples if minute * 60 <= at < (minute + 1) * 60]
        errors = sum(1 for at, _, ok in soak.samples if minute * 60 <= at < (minute + 1) * 60 and not ok)
        if not window:
            continue
        p50, p99 = percentile(window, 50), percentile(window, 99)
        base = base or p99
        print(
            f"    {minute + 1:6d} {len(window):9d} {errors:7d} {p50:10.1f} {p99:10.1f}   {p99 / base:6.2f}x"
        )
    print("    resident memory, MiB, of each process alive at both ends: after warm-up -> end (ratio)")
    for name in sorted(set(start) & set(end)):
        before, after = start[name], end[name]
        print(f"      {name:<48} {before:8.1f} -> {after:8.1f} ({after / before:4.2f}x)")
    # Sandbox spare children and Celery's pool processes come and go: counted, not listed.
    changed = Counter(name.split()[0] for name in set(start) ^ set(end))
    for label, count in sorted(changed.items()):
        print(f"      {label}: {count} short-lived processes seen at one end only (sandbox children, pool)")
    for error, count in soak.errors.most_common(10):
        print(f"    error x{count}: {error}")


async def soak_cluster(cluster: Cluster, options: argparse.Namespace) -> Soak:
    soak = Soak(cluster.url, cluster.tokens["writer"])
    go = anyio.Event()
    async with anyio.create_task_group() as tasks:
        readies = [anyio.Event() for _ in range(options.clients)]
        for n, ready in enumerate(readies):
            tasks.start_soon(soak.client_loop, n, ready, go)
        with anyio.fail_after(300):
            for ready in readies:
                await ready.wait()
        soak.start_memory = memory(cluster)
        soak.started, soak.deadline = time.perf_counter(), time.monotonic() + options.minutes * 60
        go.set()
    return soak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--replicas", type=int, default=2)
    options = parser.parse_args()
    workdir = scratch_dir("soak-")
    cluster = Cluster(workdir, replicas=options.replicas, env={"LOG_LEVEL": "WARNING"})
    try:
        cluster.start()
        soak = anyio.run(soak_cluster, cluster, options)
        report(soak, options, soak.start_memory, memory(cluster))
        return 1 if soak.errors else 0
    finally:
        cluster.close()
        remove(workdir)


if __name__ == "__main__":
    sys.exit(main())
