"""PostgreSQL restarts (``pg_ctl restart -m fast``) while clients write: the server rides it out.

On a PostgreSQL server of the test's own (never the machine's shared one). Every write the platform
acknowledged is stored afterwards; a write that failed failed cleanly (an error id, no trace or
host path); and the same server process serves writes again once PostgreSQL is back, without being
restarted itself (its pooled connections are checked and replaced: CONN_HEALTH_CHECKS).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.faults.private_postgres import PrivatePostgres, binaries
from tests.faults.writers import Write, Writers, stored_records
from tests.support.leaks import leaks
from tests.support.mcp_wire import client
from tests.support.platform_process import Database, PlatformProcess

BIN = binaries()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        BIN is None, reason="the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed"
    ),
]
WAIT_SECONDS = 60


@dataclass(frozen=True)
class Restart:
    """What came of writing through a PostgreSQL restart: the platform, every attempt, the records stored."""

    platform: PlatformProcess
    writes: list[Write]
    restarted_at: int  # index in ``writes`` of the first attempt after the restart
    stored: dict[str, dict]


@pytest.fixture(scope="module")
def restart_under_load(tmp_path_factory) -> Restart:
    """Four writers on a served platform; PostgreSQL restarts once 20 writes are in; 20 more after it."""
    server = PrivatePostgres(BIN)
    try:
        server.start()
        database = Database.postgres(server.admin_dsn)
        platform = PlatformProcess(tmp_path_factory.mktemp("pg-restart"), database.url)
        try:
            platform.migrate()
            tokens = platform.seed()[0]["tokens"]
            platform.start()
            writers = Writers(platform.base_url, tokens["writer"]).start()
            try:
                wait_for(lambda: writers.acknowledged_since(0) >= 20, "writes before the restart")
                server.restart()
                restarted = len(writers.writes)
                wait_for(lambda: writers.acknowledged_since(restarted) >= 20, "writes after the restart")
            finally:
                writes = writers.stop()
            yield Restart(platform, writes, restarted, stored_records(platform))
        finally:
            platform.stop()
    finally:
        server.remove()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT_SECONDS}s waiting for {what}")
        time.sleep(0.05)


def test_every_write_acknowledged_across_a_postgres_restart_is_stored(restart_under_load):
    acknowledged = [w for w in restart_under_load.writes if w.acknowledged]
    assert {"mcp", "front"} <= {w.channel for w in acknowledged}
    stored = restart_under_load.stored
    lost = [w for w in acknowledged if stored.get(w.record_id) != {"client_name": w.marker}]
    assert not lost, f"{len(lost)} of {len(acknowledged)} acknowledged writes lost, e.g. {lost[:3]}"


def test_the_server_serves_again_after_a_postgres_restart_without_a_restart_of_its_own(restart_under_load):
    platform = restart_under_load.platform
    assert platform.alive and platform.starts == 1, platform.log_tail()
    assert client("check").get(f"{platform.base_url}/healthz").status_code == 200
    after = restart_under_load.writes[restart_under_load.restarted_at :]
    assert {"mcp", "front"} <= {w.channel for w in after if w.acknowledged}  # both ways in came back


def test_writes_failing_during_a_postgres_restart_fail_cleanly_with_an_error_id(restart_under_load):
    failed = [w for w in restart_under_load.writes if not w.acknowledged]
    unclean = [w for w in failed if not failed_cleanly(w)]
    assert not unclean, (
        f"{len(unclean)} of {len(failed)} failures without an error id, or showing the host: {unclean[:3]}"
    )


def failed_cleanly(write: Write) -> bool:
    """Answered (the server never dropped a connection), with an error id, and nothing of the host."""
    if write.status == 0:
        return False
    return "err_" in write.answer and not leaks(write.answer)
