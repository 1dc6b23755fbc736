"""App jobs: a test app with internal routes, and a harness that runs jobs in-process or on a real worker.

The ``jobs`` fixture has two variants of every scenario. ``eager`` runs tasks in-process, as the
embedded default does with no broker. ``worker`` starts ``celery -A lowcode_platform worker`` as a
subprocess on Redis (``REDIS_URL``, default db 15), consuming a queue of its own; it needs
PostgreSQL, because a worker in another process cannot see an in-memory SQLite test database.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings

from apps_runtime.models import JobRun
from tests.support.servers import database_url

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
WAIT_SECONDS = 60

# The same job settings for the test process (eager runs) and the worker subprocess.
JOB_SETTINGS = {
    "JOBS_MAX_ATTEMPTS": 3,
    "JOBS_RETRY_BACKOFF_SECONDS": 0.2,
    "JOBS_RETRY_BACKOFF_MAX_SECONDS": 1.0,
    "JOBS_RUN_GRACE_SECONDS": 5,
    "JOBS_DISPATCH_LOOKBACK_MINUTES": 5,
}

WRITER_ROLE = "case_writer"

JOB_HANDLERS = {
    "server/kick.py": """
def handle(request):
    run_id = request.enqueue(request.body.get("route") or request.query["route"], request.body.get("payload"))
    return {"run_id": run_id}, 202
""",
    "server/kick_many.py": """
def handle(request):
    return {"run_ids": [request.enqueue("POST /jobs/write") for _ in range(request.body["count"])]}, 202
""",
    "server/write.py": """
def handle(request):
    note = request.records.create("notes", {"text": request.body.get("text", "hello"),
                                            "by": request.user["username"] if request.user else None})
    return {"id": note["id"], "user": request.user}
""",
    "server/unavailable.py": """
def handle(request):
    return {"error": "the other system is down"}, 503
""",
    "server/loop.py": """
def handle(request):
    while True:
        pass
""",
    "server/boom.py": """
def handle(request):
    print("about to fail")
    raise RuntimeError("job failed on purpose")
""",
    "server/slow.py": """
import time

def handle(request):
    time.sleep(request.body.get("seconds", 3))
    note = request.records.create("notes", {"text": "slow", "by": request.user["username"]})
    return {"id": note["id"]}
""",
}


def jobs_manifest(jobs: dict | None = None) -> dict:
    """The ``chores`` app: kick routes that enqueue (for members), and internal routes for jobs."""
    return copy.deepcopy(
        {
            "name": "chores",
            "access": "user",
            "collections": {
                "notes": {
                    "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
                    "read": "user",
                    "write": f"role:{WRITER_ROLE}",
                }
            },
            "routes": {
                "POST /kick": {"handler": "server/kick.py", "auth": "user"},
                "GET /kick": {"handler": "server/kick.py", "auth": "user"},
                "POST /kick-many": {"handler": "server/kick_many.py", "auth": "user"},
                "POST /jobs/write": {"handler": "server/write.py", "auth": "internal"},
                "POST /jobs/unavailable": {"handler": "server/unavailable.py", "auth": "internal"},
                "POST /jobs/loop": {"handler": "server/loop.py", "auth": "internal", "timeoutMs": 300},
                "POST /jobs/boom": {"handler": "server/boom.py", "auth": "internal"},
                "POST /jobs/slow": {"handler": "server/slow.py", "auth": "internal", "timeoutMs": 20000},
            },
            "jobs": jobs or {},
        }
    )


@pytest.fixture
def deploy_jobs(deploy):
    """Deploy the ``chores`` app with ``jobs`` (name -> {route, schedule, runAs})."""

    def run(tenant, jobs: dict | None = None):
        return deploy(tenant, jobs_manifest(jobs), JOB_HANDLERS)

    return run


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT_SECONDS):
    """Poll ``condition`` until it is truthy (and return it), or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


class Worker:
    """``celery -A lowcode_platform worker`` in its own process group, on a queue of its own."""

    def __init__(self, queue: str, workdir: Path):
        self.queue = queue
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def env(self, *, beat: bool) -> dict[str, str]:
        env = {
            **os.environ,
            "DEBUG": "true",
            "DATABASE_URL": database_url(),  # the test database (test_<name>), not the real one
            "CELERY_BROKER_URL": REDIS_URL,
            "CELERY_QUEUE": self.queue,
            "PLATFORM_VAR_DIR": str(settings.VAR_DIR),
            **{key: str(value) for key, value in JOB_SETTINGS.items()},
        }
        if beat:
            env["JOBS_DISPATCH_EVERY_SECONDS"] = "1"
        return env

    def start(self, *, beat: bool = False) -> None:
        self.stop()
        self.starts += 1
        self._log = log = open(self.workdir / f"worker-{self.starts}.log", "wb")  # closed by kill()
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "lowcode_platform",
            "worker",
            "-l",
            "info",
            "-P",
            "prefork",
            "-c",
            "2",
            "-Q",
            self.queue,
            "-n",
            f"{self.queue}-{self.starts}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if beat:
            command += ["-B", "-s", str(self.workdir / f"beat-{self.starts}")]
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env(beat=beat),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the worker and everything in its process group, as a machine dying would."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.proc = None
        self._log.close()

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        except ProcessLookupError:
            pass
        self.kill()

    def log_tail(self) -> str:
        path = self.workdir / f"worker-{self.starts}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""


def use_broker(*, eager: bool, queue: str | None) -> dict:
    """Point this process's Celery app at Redis (or back in-process); returns what to restore."""
    from lowcode_platform.celery import app

    old = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "task_default_queue")}
    app.conf.update(
        broker_url="memory://localhost/" if eager else REDIS_URL,
        task_always_eager=eager,
        task_default_queue=queue or old["task_default_queue"],
    )
    _drop_connections(app)
    return old


def settle_in_process_runs() -> None:
    """Wait until the in-process run threads have nothing queued or running (no broker: runs execute
    there, never in the request's thread)."""
    from apps_runtime.jobs.queue import runs

    assert runs.in_process_pool().wait_idle(WAIT_SECONDS), "in-process runs still going"


def restore_broker(old: dict) -> None:
    from lowcode_platform.celery import app

    settle_in_process_runs()  # nothing of this test may still run while the database is flushed

    app.conf.update(old)
    _drop_connections(app)


def _drop_connections(app) -> None:
    # The app caches its connection pool for the broker it first met; forget it (as after a fork).
    # Kombu keeps the pools themselves, one per broker URL, for whoever asks next.
    app._pool = None
    amqp = app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None


def forget_queue(queue: str) -> None:
    """Remove our queue and our unacknowledged messages (a killed worker's) from Redis."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.delete(queue)
    for tag, payload in client.hscan_iter("unacked"):
        if queue.encode() in payload:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)
    client.close()


def pytest_configure(config):
    config.addinivalue_line("markers", "beat: the worker variant also runs beat (every second)")


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    """A worker subprocess on Redis, shared by the session's tests (restartable; stopped at the end)."""
    queue = f"jobs-test-{uuid.uuid4().hex[:12]}"
    worker = Worker(queue, tmp_path_factory.mktemp("celery"))
    yield worker
    worker.stop()
    forget_queue(queue)


class JobsHarness:
    """Drives the same scenario in-process (eager) or through Redis and a worker subprocess."""

    def __init__(self, mode: str, worker: Worker | None):
        self.mode = mode
        self.worker = worker

    @property
    def eager(self) -> bool:
        return self.mode == "eager"

    def dispatch(self, at: datetime | None = None) -> None:
        """Send the dispatcher task (what beat sends every minute), for the minute of ``at``."""
        from apps_runtime.tasks import dispatch_due_jobs

        dispatch_due_jobs.delay(at.isoformat() if at else None)

    def reap(self, at: datetime) -> None:
        from apps_runtime.tasks import reap_job_runs

        reap_job_runs.delay(at.isoformat())

    def finished(self, tenant, run_id: str, timeout: float = WAIT_SECONDS) -> JobRun:
        """The run once it has finished (succeeded, failed or timed out)."""

        def done():
            run = JobRun.objects.for_tenant(tenant).filter(run_id=run_id).first()
            return run if run is not None and run.is_finished else None

        return wait_until(done, f"run {run_id} to finish{self._diagnostics()}", timeout)

    def finished_runs(self, tenant, count: int, timeout: float = WAIT_SECONDS, **filters) -> list[JobRun]:
        """Exactly ``count`` runs matching ``filters``, all finished."""

        def done():
            runs = list(JobRun.objects.for_tenant(tenant).filter(**filters).order_by("scheduled_for", "id"))
            return runs if len(runs) >= count and all(r.is_finished for r in runs) else None

        runs = wait_until(done, f"{count} finished runs matching {filters}{self._diagnostics()}", timeout)
        assert len(runs) == count, [(r.run_id, r.scheduled_for) for r in runs]
        return runs

    def lose_worker_mid_run(self, tenant, run: JobRun) -> JobRun:
        """The worker running ``run`` dies mid-handler; returns the run as it was left."""
        if self.eager:
            from apps_runtime.jobs import runs

            # In-process there is no worker to kill: take the attempt as a worker would, never finish it.
            assert runs.claim(run, version_number=run.version_number, timeout_ms=20000)
        else:
            wait_until(
                lambda: JobRun.objects.for_tenant(tenant).filter(pk=run.pk, status="running").exists(),
                f"the worker to start {run.run_id}{self._diagnostics()}",
            )
            self.worker.kill()
            self.worker.start()
        run.refresh_from_db()
        return run

    def _diagnostics(self) -> str:
        if self.eager or self.worker is None:
            return ""
        return "\n--- worker log ---\n" + self.worker.log_tail()


WORKER_VARIANT = pytest.param("worker", marks=[pytest.mark.slow])


@pytest.fixture(params=["eager", WORKER_VARIANT])
def jobs(request, transactional_db, settings):
    """The harness in one mode; job settings match the worker's. Rows are committed (transactional_db)."""
    for key, value in JOB_SETTINGS.items():
        setattr(settings, key, value)
    if request.param == "eager":
        old = use_broker(eager=True, queue=None)
        yield JobsHarness("eager", None)
        restore_broker(old)
        return
    worker = request.getfixturevalue("celery_worker")
    beat = bool(request.node.get_closest_marker("beat"))
    worker.start(beat=beat)
    old = use_broker(eager=False, queue=worker.queue)
    try:
        yield JobsHarness("worker", worker)
    finally:
        restore_broker(old)
        worker.stop()  # nothing of this test may still run while the database is flushed


def as_json(response) -> dict:
    return json.loads(response.content)
