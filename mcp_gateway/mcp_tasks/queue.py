"""Sending task runs: to Celery once the task row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
``tools/call``: the caller is promised an answer at once. So it goes to a small pool of threads of
the server (TASK_IN_PROCESS_WORKERS), shared fairly: a tenant runs at most TASK_TENANT_SHARE tasks
at once, and the tenants' queues are served in turn, so one tenant's long tasks never hold another
tenant's task back. A run lost there with the process is found by the sweep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction

from core.fair_pool import FairPool
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolTask

logger = logging.getLogger("mcp_gateway.mcp_tasks.queue")

RUN_TASK = "mcp_gateway.run_tool_task"  # the Celery task of ``mcp_gateway/tasks.py``
_pool: FairPool | None = None
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
    tenant_id = ToolTask.all_tenants.filter(task_id=task_id).values_list("tenant_id", flat=True).first()
    if tenant_id is not None:  # purged meanwhile: nothing to run
        in_process_pool().submit(tenant_id, _run_in_process, task_id)


def in_process_pool() -> FairPool:
    """This process's task threads (built on first use, from the settings of that moment)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = FairPool("mcp-task", settings.TASK_IN_PROCESS_WORKERS, settings.TASK_TENANT_SHARE)
        return _pool


def _run_in_process(task_id: str) -> None:
    try:
        execute_task(task_id)
    except Exception:  # the top of a run thread: the sweep fails a run left behind
        logger.exception("Task %s failed in-process", task_id)
    finally:
        close_old_connections()
