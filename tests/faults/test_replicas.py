"""Three replicas behind haproxy (round-robin, no stickiness), under load from both MCP eras, through
a deploy, a replica's death, a PostgreSQL restart and a Redis restart.

The set-up is docs/production.md's "Behind a load balancer" (``tests/support/cluster.py``): a private
PostgreSQL and Redis, three ``manage.py serve`` replicas, a Celery worker and beat, haproxy in
front. Official SDK clients of 2026-07-28 (stateless: any replica answers any request) and of
2025-11-25 (a session each, which haproxy routes by its ``Mcp-Session-Id``) read and write records
the whole time. What must hold:

- calls reach every replica;
- a deploy made through the balancer in the middle of the load reaches every client: the new
  tool is in each one's next ``tools/list``, each 2025-11-25 session is sent
  ``notifications/tools/list_changed``, each 2026-07-28 client listening hears it;
- after a replica is SIGKILLed, PostgreSQL restarted, Redis restarted, every client serves calls
  again (a 2025-11-25 client whose session died with its replica gets the documented 404 and opens
  a new session); a task sent after the Redis restart is run by the worker;
- every write the platform acknowledged is stored;
- the only 5xx answers are the documented ones (docs/production.md, "Behind a load balancer"), and only while
  a fault lasts: 502 or 503 from haproxy (a request in flight on the replica that died; no replica
  healthy while PostgreSQL restarts), 503 from a replica while its database is unreachable.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.faults.private_postgres import binaries
from tests.support.cluster import Cluster, wait_until
from tests.support.task_client import create_task, wait_until_finished

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(binaries() is None, reason="the PostgreSQL server binaries are not installed"),
    pytest.mark.timeout(600),
]
MODERN, LEGACY = "2026-07-28", "legacy"
CLIENTS = {MODERN: 3, LEGACY: 3}
CALL_SECONDS = 30  # a bound on every MCP call, so a call lost with its replica cannot hang a client
RECOVERY_SECONDS = 90
ADDED_TOOL = "acme_cases_added_after_start"
# Answers docs/production.md documents for a fault, by who gives them (haproxy's have no problem body).
DOCUMENTED_5XX = {502, 503}
REPLICAS = {"replica1", "replica2", "replica3"}  # haproxy's names for them (tests/support/cluster.py)


@dataclass
class Answer:
    at: float
    status: int
    replica: str
    path: str
    client: str


@dataclass
class Load:
    """Clients of both eras calling through the balancer; what they saw."""

    url: str
    token: str
    answers: list[Answer] = field(default_factory=list)
    acknowledged: dict[str, str] = field(default_factory=dict)  # marker -> record id
    ok_calls: Counter = field(default_factory=Counter)  # client -> calls that succeeded
    failures: list[tuple[float, str, str]] = field(default_factory=list)  # (time, client, what)
    sessions_opened: Counter = field(default_factory=Counter)
    heard_change: set = field(default_factory=set)  # clients told the tool list changed
    session_replica: dict = field(default_factory=dict)  # 2025 client -> replica of its current session
    session_id: dict = field(default_factory=dict)  # 2025 client -> its current session id
    saw_new_tool: set = field(default_factory=set)
    killed_replica: str = ""
    killed_session: str = ""  # legacy-0's session when its replica was killed
    deployed: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._markers = itertools.count()

    def http(self, name: str) -> httpx2.AsyncClient:
        """Client ``name``'s HTTP client: every answer is noted, with the replica haproxy chose."""

        async def on_response(response: httpx2.Response) -> None:
            replica = response.headers.get("x-replica", "-")
            answer = Answer(time.monotonic(), response.status_code, replica, response.url.path, name)
            with self._lock:
                self.answers.append(answer)
                if response.headers.get("mcp-session-id"):  # the answer that opened a 2025 session
                    self.session_replica[name] = replica
                    self.session_id[name] = response.headers["mcp-session-id"]

        return httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=httpx2.Timeout(CALL_SECONDS),
            event_hooks={"response": [on_response]},
        )

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            for era, count in CLIENTS.items():
                for n in range(count):
                    tasks.start_soon(self.client_loop, f"{era}-{n}", era)
            while not self.stop.is_set():
                await anyio.sleep(0.1)
            tasks.cancel_scope.cancel()

    async def client_loop(self, name: str, era: str) -> None:
        """Open a client and call through it; a 2025-11-25 client whose session is gone opens another."""
        while not self.stop.is_set():

            async def on_message(message, name=name) -> None:
                method = getattr(getattr(message, "root", message), "method", None)
                if method == "notifications/tools/list_changed" and self.deployed.is_set():
                    self.heard_change.add(name)

            try:
                async with self.http(name) as http:
                    transport = streamable_http_client(f"{self.url}/t/acme/mcp", http_client=http)
                    client = Client(
                        transport, mode=era, message_handler=on_message, read_timeout_seconds=CALL_SECONDS
                    )
                    async with client:
                        self.sessions_opened[name] += 1
                        await self.calls(client, name, era)
            except Exception as err:  # noqa: BLE001 - the client reconnects whatever broke
                self.failures.append((time.monotonic(), name, f"session: {type(err).__name__}: {err}"[:300]))
                await anyio.sleep(0.5)

    async def calls(self, client: Client, name: str, era: str) -> None:
        listener = None
        if era == MODERN:
            listener = anyio.Event()
        async with anyio.create_task_group() as tasks:
            if listener is not None:
                tasks.start_soon(self.listen, client, name, listener)
            with anyio.fail_after(CALL_SECONDS):
                await client.list_tools()  # a 2025-11-25 session is watched for changes once it lists
            while not self.stop.is_set():
                if self.deployed.is_set() and name not in self.saw_new_tool:
                    await self.look_for_new_tool(client, name)
                try:
                    with anyio.fail_after(CALL_SECONDS):
                        await self.one_call(client, name)
                except Exception as err:  # noqa: BLE001 - counted; stateless clients carry on
                    self.failures.append((time.monotonic(), name, f"{type(err).__name__}: {err}"[:300]))
                    if era == LEGACY:
                        raise  # the session may be gone with its replica: open a new one
                    await anyio.sleep(0.2)
            tasks.cancel_scope.cancel()

    async def listen(self, client: Client, name: str, ready: anyio.Event) -> None:
        """A 2026-07-28 client's subscription to list changes, renewed when its stream breaks."""
        while not self.stop.is_set():
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    async for _event in subscription:
                        if self.deployed.is_set():
                            self.heard_change.add(name)
            except Exception:  # noqa: BLE001 - its replica died or restarted: subscribe again
                await anyio.sleep(0.5)

    async def look_for_new_tool(self, client: Client, name: str) -> None:
        with anyio.fail_after(CALL_SECONDS):
            tools = [tool.name for tool in (await client.list_tools()).tools]
        if ADDED_TOOL in tools:
            self.saw_new_tool.add(name)

    async def one_call(self, client: Client, name: str) -> None:
        n = next(self._markers)
        if n % 2:
            result = await client.call_tool("acme_cases_find_case", {"query": "ada"})
            assert result.is_error is False, result.content
        else:
            marker = f"{name}-{n}"
            result = await client.call_tool("acme_cases_create_case", {"client_name": marker})
            assert result.is_error is False, result.content
            with self._lock:
                self.acknowledged[marker] = str((result.structured_content or {}).get("id"))
        self.ok_calls[name] += 1

    def calls_since(self, snapshot: Counter) -> dict[str, int]:
        names = [f"{era}-{n}" for era, count in CLIENTS.items() for n in range(count)]
        return {name: self.ok_calls[name] - snapshot[name] for name in names}


@dataclass
class Fault:
    name: str
    began: float
    ended: float = 0.0


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The whole scenario, once; the tests below check what came of it."""
    cluster = Cluster(tmp_path_factory.mktemp("replicas"), replicas=3).start()
    load = Load(cluster.url, cluster.tokens["writer"])
    faults: list[Fault] = []
    loader = threading.Thread(target=anyio.run, args=(load.run,), name="load", daemon=True)
    loader.start()
    try:

        def every_client_calls(since: Counter, calls: int = 3) -> bool:
            return all(n >= calls for n in load.calls_since(since).values())

        wait_until(lambda: every_client_calls(Counter()), "every client's first calls", RECOVERY_SECONDS)
        wait_until(
            lambda: {a.replica for a in load.answers if a.path.endswith("/mcp")} >= REPLICAS,
            "MCP calls on every replica",
            RECOVERY_SECONDS,
        )

        deploy_through_balancer(cluster)
        load.deployed.set()
        every_client = {f"{era}-{n}" for era, count in CLIENTS.items() for n in range(count)}
        wait_until(lambda: load.saw_new_tool >= every_client, "every client to list the new tool", 60)
        wait_until(
            lambda: load.heard_change >= every_client,
            lambda: f"every client to hear of the change (heard: {sorted(load.heard_change)})",
            60,
        )

        for name, inflict in (
            # The replica holding the first 2025 client's session: its death must cost that session.
            ("replica killed", lambda: cluster.kill_replica(victim(load))),
            ("postgres restarted", cluster.postgres.restart),
            ("redis restarted", cluster.redis.restart),
        ):
            snapshot = Counter(load.ok_calls)
            fault = Fault(name, time.monotonic())
            faults.append(fault)
            inflict()
            wait_until(lambda s=snapshot: every_client_calls(s), f"every client to call again ({name})", 120)
            fault.ended = time.monotonic()

        task_status = anyio.run(task_after_redis_restart, cluster)
    except BaseException:
        load.stop.set()
        loader.join(timeout=60)
        print(cluster.logs())
        print("\n".join(f"{at:.1f} {who}: {what}" for at, who, what in load.failures[-40:]))
        cluster.close()
        raise
    load.stop.set()
    loader.join(timeout=60)
    stored = cluster.replicas[0].python(
        "import json; from apps_runtime.models import Record; "
        "print(json.dumps({r.record_id: r.data.get('client_name') for r in "
        "Record.all_tenants.filter(collection='cases')}))"
    )
    yield load, faults, stored, task_status, cluster
    cluster.close()


def victim(load: Load) -> int:
    """The index of the replica where the 2025-11-25 client ``legacy-0`` has its session now."""
    load.killed_replica = load.session_replica[f"{LEGACY}-0"]
    load.killed_session = load.session_id[f"{LEGACY}-0"]
    return int(load.killed_replica.removeprefix("replica")) - 1


def deploy_through_balancer(cluster: Cluster) -> None:
    """A new version of the test app, with one more tool, posted to the API through haproxy."""
    from tests.support.apps import HANDLERS, cases_manifest_plus

    tool = {
        "name": "added_after_start",
        "description": "A tool deployed while clients were calling.",
        "route": "GET /cases/search",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    response = httpx2.post(
        f"{cluster.url}/api/tenants/acme/apps",
        json={"manifest": cases_manifest_plus({}, [tool]), "files": HANDLERS},
        headers={"Authorization": f"Bearer {cluster.tokens['admin']}"},
        timeout=120,
    )
    assert response.status_code in (200, 201), response.text


async def task_after_redis_restart(cluster: Cluster) -> str:
    """An MCP task created after Redis came back: the worker must still get it and run it."""
    headers = {"Authorization": f"Bearer {cluster.tokens['reader']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(CALL_SECONDS)) as http:
        transport = streamable_http_client(f"{cluster.url}/t/acme/mcp", http_client=http)
        async with Client(transport, mode=LEGACY) as client:
            created = await create_task(client, "acme_reports_quick", {})
            final = await wait_until_finished(client, created.task.task_id, limit_seconds=90)
            return final.status


def test_calls_reached_every_replica_in_both_eras(run):
    load, *_ = run
    mcp = [a for a in load.answers if a.path.endswith("/mcp") and a.status == 200]
    assert {a.replica for a in mcp} >= REPLICAS
    assert all(load.sessions_opened[f"{era}-0"] >= 1 for era in CLIENTS)


def test_the_deploy_reached_every_client_of_both_eras(run):
    load, *_ = run
    every_client = {f"{era}-{n}" for era, count in CLIENTS.items() for n in range(count)}
    assert load.saw_new_tool == every_client
    assert load.heard_change >= every_client


def test_every_client_calls_again_after_each_fault(run):
    load, faults, *_ = run
    assert [f.name for f in faults] == ["replica killed", "postgres restarted", "redis restarted"]
    assert all(f.ended > f.began for f in faults)


def test_a_2025_session_on_the_killed_replica_is_not_found_and_its_client_opened_a_new_one(run):
    load, faults, _stored, _task, cluster = run
    killed, client = faults[0], f"{LEGACY}-0"
    before = [a for a in load.answers if a.client == client and a.at < killed.began]
    after = [a for a in load.answers if a.client == client and a.at >= killed.began]
    assert before and before[-1].replica == load.killed_replica  # its session lived there
    assert load.sessions_opened[client] >= 2
    assert any(when >= killed.began for when, who, _ in load.failures if who == client)
    assert any(a.status == 200 and a.replica != load.killed_replica for a in after)
    # The documented answer to a request of that session now: 404, whichever replica haproxy picks.
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {
        "Authorization": f"Bearer {load.token}",
        "Mcp-Session-Id": load.killed_session,
        "MCP-Protocol-Version": "2025-11-25",
        "Accept": "application/json, text/event-stream",
    }
    for _ in range(3):
        answer = httpx2.post(f"{cluster.url}/t/acme/mcp", json=ping, headers=headers, timeout=30)
        assert answer.status_code == 404, answer.text


def test_a_task_sent_after_the_redis_restart_is_run_by_the_worker(run):
    *_, task_status, _cluster = run
    assert task_status == "completed"


def test_every_acknowledged_write_is_stored(run):
    load, _faults, stored, *_ = run
    assert len(load.acknowledged) >= 20
    missing = {marker: rid for marker, rid in load.acknowledged.items() if stored.get(rid) != marker}
    assert not missing


def test_the_only_5xx_are_the_documented_ones_while_a_fault_lasts(run):
    load, faults, *_ = run
    grace = 15.0  # haproxy's health checks take up to two intervals to mark a replica down or up
    undocumented = [
        a
        for a in load.answers
        if a.status >= 500
        and (a.status not in DOCUMENTED_5XX or not any(f.began <= a.at <= f.ended + grace for f in faults))
    ]
    assert not undocumented, undocumented[:20]
    assert not [a for a in load.answers if a.status == 500]


def test_the_admin_stylesheet_is_served_through_the_balancer_with_debug_off(run):
    *_, cluster = run
    response = httpx2.get(f"{cluster.url}/static/admin/css/base.css", timeout=30)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
