"""A clock for the embedded default: with no broker there is no beat, so a thread ticks instead.

``InProcessClock`` does, in one process, what beat does with the broker: every minute it runs the
dispatcher and the reaper (whose runs then execute in-process), and the other upkeep it is given.
Start it only when tasks run eagerly and only in one process; with a broker, run
``celery -A lowcode_platform beat`` instead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from django.db import close_old_connections

from apps_runtime.jobs import runs, schedule

logger = logging.getLogger("apps_runtime.jobs")


def tick(now: datetime | None = None) -> list[str]:
    """One beat: queue the due job minutes and take back lost attempts; returns the new run ids."""
    run_ids = schedule.dispatch_due_jobs(now)
    runs.reap(now)
    return run_ids


class InProcessClock:
    """A daemon thread calling ``tick`` every ``every`` seconds (default: at the start of each minute).

    ``also``: more upkeep of beat's to do on each tick (the MCP tasks' sweep), each on its own.
    """

    def __init__(self, *, every: float | None = None, also: Sequence[Callable[[], object]] = ()):
        self._every = every
        self._also = tuple(also)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jobs-clock", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _wait(self) -> float:
        return self._every if self._every is not None else 60 - time.time() % 60

    def _run(self) -> None:
        while not self._stop.wait(self._wait()):
            for step in (tick, *self._also):
                try:
                    step()
                except Exception:  # a tick that fails must not stop the clock: the next one retries
                    logger.exception("The jobs clock's %s failed", getattr(step, "__name__", step))
                finally:
                    close_old_connections()
