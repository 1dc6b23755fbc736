"""A task's handler progress as the task's ``statusMessage``: what ``tasks/get`` shows while it runs.

The run's ``CallEvents`` (``apps_runtime.call_events``, already checked and bounded there) write the
latest progress to the task row at most once per ``WRITE_INTERVAL_SECONDS``; log lines stay in the
run's log.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.models import ToolTask

WRITE_INTERVAL_SECONDS = 1.0


def status_text(done: float, total: float | None, message: str | None) -> str:
    """E.g. ``3/12: Rendering page 3``: the handler's own numbers and words, nothing made up."""
    count = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
    return f"{count}: {message}" if message else count


class TaskStatusEvents:
    """``CallEvents`` of a task's run: progress becomes the task's status message, throttled."""

    def __init__(self, task: ToolTask, *, clock: Callable[[], float] = time.monotonic):
        self._task = task
        self._clock = clock
        self._last_write: float | None = None

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        now = self._clock()
        if self._last_write is not None and now - self._last_write < WRITE_INTERVAL_SECONDS:
            return  # the next one after the interval carries the news
        self._last_write = now
        task_store.note_progress(self._task, status_text(done, total, message))

    def log(self, level: str, message: str) -> None:
        """Log lines are in the run's log (the tenant's admins read it); a task's status is no log."""
