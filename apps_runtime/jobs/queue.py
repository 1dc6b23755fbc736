"""Sending ``run_job`` tasks, always after the rows they name are committed.

A task sent before its row commits could reach a worker that cannot see the row yet. A send that
fails (the broker is down) is logged, not raised: the run stays queued and the reaper sends it again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

from django.db import transaction

logger = logging.getLogger("apps_runtime.jobs")


def send_on_commit(run_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """Send a ``run_job`` task for each run once the current transaction commits (at once outside one)."""
    for run_id in run_ids:
        transaction.on_commit(functools.partial(_send, run_id, countdown), robust=True)


def _send(run_id: str, countdown: float | None) -> None:
    # apps_runtime.tasks imports the route runtime, which sends through this module: import at call time.
    from apps_runtime.tasks import run_job

    run_job.apply_async((run_id,), countdown=countdown)
