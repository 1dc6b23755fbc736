"""Sending ``run_job`` tasks, always after the rows they name are committed.

A task sent before its row commits could reach a worker that cannot see the row yet. A send that
fails (the broker is down) is logged, not raised: the run stays queued and the reaper sends it again.

With no broker (the embedded default) runs execute in this process, on a small pool of threads
(``JOBS_IN_PROCESS_WORKERS``) shared fairly between tenants: a tenant runs at most
``JOBS_TENANT_SHARE`` of them at once and the tenants' queues are served in turn. Never in the
thread that sends them: that is the request's (a gateway thread of the tool call, charged to the
tenant's share of tool calls), and a handler queuing its own route would keep that call, and its
thread, busy for as long as the chain runs, even after the client left. With the default share of
one, runs queued by a run start after it has finished, never inside it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import close_old_connections, transaction

from apps_runtime.models import JobRun
from core.fair_pool import FairPool

logger = logging.getLogger("apps_runtime.jobs")

_pool: FairPool | None = None
_pool_lock = threading.Lock()


def send_on_commit(run_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """Send a ``run_job`` task for each run once the current transaction commits (at once outside one)."""
    for run_id in run_ids:
        transaction.on_commit(_sender(run_id, countdown), robust=True)


def _sender(run_id: str, countdown: float | None) -> Callable[[], None]:
    # A named function, not a partial: Django names a failed robust callback by its __qualname__.
    def send_run_job() -> None:
        _send(run_id, countdown)

    return send_run_job


def _send(run_id: str, countdown: float | None) -> None:
    # apps_runtime.tasks imports the route runtime, which sends through this module: import at call time.
    from apps_runtime.tasks import run_job

    if not run_job.app.conf.task_always_eager:
        run_job.apply_async((run_id,), countdown=countdown)
        return
    # In-process there is nobody to wait for a countdown: retries run as soon as a thread is free.
    tenant_id = JobRun.all_tenants.filter(run_id=run_id).values_list("tenant_id", flat=True).first()
    if tenant_id is not None:
        in_process_pool().submit(tenant_id, _run_in_process, run_job, run_id)


def in_process_pool() -> FairPool:
    """This process's run threads (built on first use, from the settings of that moment)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            # Niced: runs are background work, requests being answered go first.
            _pool = FairPool("job-run", settings.JOBS_IN_PROCESS_WORKERS, settings.JOBS_TENANT_SHARE, nice=10)
        return _pool


def _run_in_process(run_job, run_id: str) -> None:
    try:
        run_job.apply((run_id,), throw=True)
    except Exception:  # one run's failure must not strand the runs queued after it; the reaper has it
        logger.exception("Run %s failed in-process", run_id)
    finally:
        close_old_connections()
