"""Celery tasks of the app runtime: thin wrappers that take ids and times, never model instances."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from celery import shared_task
from celery.signals import worker_process_init, worker_process_shutdown

from apps_runtime.jobs import execute, queue, runs, schedule
from apps_runtime.sandbox import get_sandbox
from apps_runtime.superseded import Sweeper


def _moment(at: str | None) -> datetime | None:
    """An ISO 8601 time from a task's arguments (UTC when it has no offset)."""
    if at is None:
        return None
    moment = datetime.fromisoformat(at)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@shared_task(name=queue.RUN_TASK, ignore_result=True)
def run_job(run_id: str) -> None:
    """Run the next attempt of a queued run (a no-op for a run already started or finished)."""
    execute.execute_run(run_id)


@shared_task(name="apps_runtime.dispatch_due_jobs", ignore_result=True)
def dispatch_due_jobs(at: str | None = None) -> int:
    """Beat's entry, every minute: queue the runs of the job minutes due up to ``at`` (default now)."""
    return len(schedule.dispatch_due_jobs(_moment(at)))


@shared_task(name="apps_runtime.reap_job_runs", ignore_result=True)
def reap_job_runs(at: str | None = None) -> dict:
    """Beat's entry, every minute: take back attempts lost with their worker; resend forgotten runs."""
    reaped = runs.reap(_moment(at))
    return {"requeued": reaped.requeued, "failed": reaped.failed, "resent": reaped.resent}


@shared_task(name="apps_runtime.ping")
def ping() -> float:
    """The worker's clock: a health check, and the jobs benchmark's baseline round trip."""
    return time.time()


@worker_process_init.connect
def _sweep_superseded_workers(**kwargs) -> None:
    # No ASGI lifespan here: a thread retires this process's workers of versions deployed over elsewhere.
    Sweeper().start()


@worker_process_shutdown.connect
def _close_sandbox(**kwargs) -> None:
    # Prefork children exit without running atexit hooks; close the zygote and its scratch root here.
    get_sandbox().close()
