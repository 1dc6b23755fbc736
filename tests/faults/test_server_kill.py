"""SIGKILL ``manage.py serve`` mid-deploy and mid-write: nothing half-applied, nothing acknowledged lost.

A deploy is all-or-nothing: after the kill and a restart, either the new version is active with
every one of its tools, or the old version still is, with its own; never a mix, never a version
row that is not active. Every record write the platform acknowledged is there after the restart.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

import httpx2
import psycopg
import pytest

from tests.faults.writers import Writers, stored_records
from tests.support import mcp_wire as wire

pytestmark = pytest.mark.slow

APP = "big"
WAIT_SECONDS = 60
ADMIN_TIMEOUT = httpx2.Timeout(120.0)


def big_app(version: str, tools: int) -> dict:
    """App ``big`` whose tools are named after ``version``, so two versions never share a tool."""
    return {
        "manifest": {
            "name": APP,
            "routes": {"GET /ping": {"handler": "server/ping.py", "auth": "user"}},
            "mcp": {
                "tools": [
                    {
                        "name": f"{version}_{i}",
                        "description": f"Tool {i} of version {version} of the big app.",
                        "route": "GET /ping",
                        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
                    }
                    for i in range(tools)
                ]
            },
        },
        "files": {"server/ping.py": "def handle(request):\n    return {'pong': True}\n"},
    }


def deploy(killable, bundle: dict) -> httpx2.Response:
    return httpx2.post(
        f"{killable.base_url}/api/tenants/acme/apps",
        json=bundle,
        headers={"Authorization": f"Bearer {killable.tokens['admin']}"},
        timeout=ADMIN_TIMEOUT,
    )


def app_state(killable) -> tuple[int | None, list[int], list[str], list[str]]:
    """(active version, every version stored, its tools per the API, the app's tools per tools/list)."""
    auth = {"Authorization": f"Bearer {killable.tokens['admin']}"}
    base = f"{killable.base_url}/api/tenants/acme/apps"
    apps = httpx2.get(base, headers=auth, timeout=ADMIN_TIMEOUT).json()
    app = next(a for a in apps if a["name"] == APP)
    versions = httpx2.get(f"{base}/{APP}/versions", headers=auth, timeout=ADMIN_TIMEOUT).json()
    listed = wire.tool_names(f"{killable.base_url}/t/acme/mcp", killable.tokens["root"])
    return (
        app["active_version"],
        sorted(v["number"] for v in versions),
        sorted(t["name"] for t in app["tools"]),
        sorted(name.removeprefix(f"acme_{APP}_") for name in listed if name.startswith(f"acme_{APP}_")),
    )


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT_SECONDS}s waiting for {what}")
        time.sleep(0.002)


def kill_mid_transaction(killable, start_deploy: Callable[[], None]) -> None:
    """SIGKILL the server while its deploy transaction is open (written but not committed)."""
    path = killable.database.path
    if path is not None:
        # SQLite has one writer: the database refusing ours means the deploy's transaction holds it.
        def write_locked() -> bool:
            probe = sqlite3.connect(path, timeout=0)
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
                return False
            except sqlite3.OperationalError:
                return True
            finally:
                probe.close()

        start_deploy()
        wait_for(write_locked, "the deploy's transaction")
        killable.platform.kill()
        return
    # PostgreSQL: hold the tenant row, which the deploy updates last (the catalog's state bump), so
    # the deploy waits with all its rows written and its transaction open; kill it there.
    dsn = killable.database.url.replace("postgres://", "postgresql://")
    with psycopg.connect(dsn) as lock, psycopg.connect(dsn, autocommit=True) as watch:
        lock.execute("SELECT 1 FROM tenants_tenant WHERE slug = 'acme' FOR UPDATE")
        start_deploy()

        def deploy_waits() -> bool:
            row = watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query ILIKE '%%state_version%%'"
            ).fetchone()
            return row[0] > 0

        wait_for(deploy_waits, "the deploy to wait on the tenant row")
        killable.platform.kill()
        lock.rollback()


def test_a_deploy_killed_mid_transaction_leaves_the_old_version_whole(killable):
    assert deploy(killable, big_app("old", 3)).status_code == 201
    before = app_state(killable)
    assert before == (1, [1], sorted(f"old_{i}" for i in range(3)), sorted(f"old_{i}" for i in range(3)))

    answers: list[object] = []
    thread = threading.Thread(target=lambda: answers.append(_deploy_or_error(killable, big_app("new", 1500))))
    kill_mid_transaction(killable, thread.start)
    thread.join(timeout=WAIT_SECONDS)
    assert answers and not isinstance(answers[0], httpx2.Response), "the deploy was answered before the kill"
    killable.platform.start()

    assert app_state(killable) == before  # the old version whole: no new version row, no new tool


def test_a_deploy_acknowledged_before_a_kill_is_active_whole_after_it(killable):
    assert deploy(killable, big_app("old", 3)).status_code == 201
    assert deploy(killable, big_app("new", 400)).status_code == 201
    killable.platform.kill()
    killable.platform.start()

    new_tools = sorted(f"new_{i}" for i in range(400))
    assert app_state(killable) == (2, [1, 2], new_tools, new_tools)


def _deploy_or_error(killable, bundle: dict) -> httpx2.Response | Exception:
    try:
        return deploy(killable, bundle)
    except httpx2.HTTPError as err:
        return err


def test_every_acknowledged_record_write_survives_a_sigkill_of_the_server(killable):
    writers = Writers(killable.base_url, killable.tokens["writer"]).start()
    wait_for(lambda: writers.acknowledged_since(0) >= 40, "40 acknowledged writes")
    killable.platform.kill()
    writes = writers.stop()
    killable.platform.start()

    stored = stored_records(killable.platform)
    acknowledged = [w for w in writes if w.acknowledged]
    assert {"mcp", "front"} <= {w.channel for w in acknowledged}
    lost = [w for w in acknowledged if w.record_id not in stored]
    assert not lost, f"{len(lost)} acknowledged writes lost, e.g. {lost[:3]}"
    wrong = [w for w in acknowledged if stored[w.record_id] != {"client_name": w.marker}]
    assert not wrong, f"acknowledged writes stored differently, e.g. {wrong[:3]}"
    attempted = {w.marker for w in writes}
    assert all(data["client_name"] in attempted for data in stored.values()), "a record nobody wrote"
    after = Writers(killable.base_url, killable.tokens["writer"], count=2).start()
    wait_for(lambda: after.acknowledged_since(0) >= 2, "writes after the restart")
    after.stop()
