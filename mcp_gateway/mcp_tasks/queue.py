"""Sending task runs: to Celery once the task row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
``tools/call``: the caller is promised an answer at once. So it goes to a small pool of threads of
the server (TASK_IN_PROCESS_WORKERS); a run lost there with the process is found by the sweep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction

from mcp_gateway.mcp_tasks.runs import execute_task

logger = logging.getLogger("mcp_gateway.mcp_tasks.queue")

RUN_TASK = "mcp_gateway.run_tool_task"  # the Celery task of ``mcp_gateway/tasks.py``
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def send_on_commit(task_ids: Iterable[str]) -> None:
    """Send a run for each task once the current transaction commits (at once outside one)."""
    for task_id in task_ids:
        transaction.on_commit(_sender(task_id), robust=True)


def _sender(task_id: str):
    def send_tool_task() -> None:
        _send(task_id)

    return send_tool_task


def _send(task_id: str) -> None:
    if not current_app.conf.task_always_eager:
        current_app.send_task(RUN_TASK, (task_id,))
        return
    _in_process_pool().submit(_run_in_process, task_id)


def _in_process_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(settings.TASK_IN_PROCESS_WORKERS, thread_name_prefix="mcp-task")
        return _pool


def _run_in_process(task_id: str) -> None:
    try:
        execute_task(task_id)
    except Exception:  # the top of a run thread: the sweep fails a run left behind
        logger.exception("Task %s failed in-process", task_id)
    finally:
        close_old_connections()
