"""Sending ``run_job`` tasks, always after the rows they name are committed.

A task sent before its row commits could reach a worker that cannot see the row yet. A send that
fails (the broker is down) is logged, not raised: the run stays queued and the reaper sends it again.

With no broker (the embedded default) a task runs in the thread that sends it. A run's handler may
queue more runs, and sent at once each would execute inside the run that queued it: a handler
queuing its own route would recurse until the stack gave out, leaving every run on it ``running``.
So in-process sends go through a per-thread drain: the first send runs its task and then, one after
another, every task sent meanwhile. Runs queued by a run start after it has finished, never inside it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable

from django.db import transaction

logger = logging.getLogger("apps_runtime.jobs")

_drain = threading.local()


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
    pending = getattr(_drain, "pending", None)
    if pending is not None:
        pending.append(run_id)  # a run is executing in this thread: this one starts after it
        return
    # In-process there is nobody to wait for a countdown: retries run at once, like every send.
    _drain.pending = pending = deque([run_id])
    try:
        while pending:
            _run_in_process(run_job, pending.popleft())
    finally:
        _drain.pending = None


def _run_in_process(run_job, run_id: str) -> None:
    try:
        run_job.apply((run_id,), throw=True)
    except Exception:  # one run's failure must not strand the runs queued after it; the reaper has it
        logger.exception("Run %s failed in-process", run_id)
