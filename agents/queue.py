"""Sending run slices: to Celery once the run row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
request: the caller is promised a 202 at once. So it goes to a small pool of threads of the server
(AGENT_RUN_IN_PROCESS_WORKERS); a run lost there with the process is found by the sweep.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction

from agents.execution import execute_run

logger = logging.getLogger("agents.queue")

RUN_TASK = "agents.execute_run"  # the Celery task of ``agents/tasks.py``
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def send_on_commit(run_id: str) -> None:
    """Send the run's next slice once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _send(run_id), robust=True)


def _send(run_id: str) -> None:
    if not current_app.conf.task_always_eager:
        current_app.send_task(RUN_TASK, (run_id,))
        return
    _in_process_pool().submit(_run_in_process, run_id)


def _in_process_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(settings.AGENT_RUN_IN_PROCESS_WORKERS, thread_name_prefix="agent-run")
        return _pool


def _run_in_process(run_id: str) -> None:
    try:
        execute_run(run_id)
    except Exception:  # the top of a run thread: the sweep fails a run left behind
        logger.exception("Agent run %s failed in-process", run_id)
    finally:
        close_old_connections()
