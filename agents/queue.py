"""Sending run slices: to Celery once the run row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
request: the caller is promised a 202 at once. So it goes to a small pool of threads of the server,
shared fairly by tenants (``core.fair_pool``: AGENT_RUN_IN_PROCESS_WORKERS threads, at most
AGENT_RUN_TENANT_SHARE of them for one tenant); a run lost there with the process is found by the sweep.
"""

from __future__ import annotations

import logging
import threading

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction

from agents.models import AgentRun
from core.fair_pool import FairPool

logger = logging.getLogger("agents.queue")

RUN_TASK = "agents.execute_run"  # the Celery task of ``agents/tasks.py``
_pool: FairPool | None = None
_pool_lock = threading.Lock()


def send_on_commit(run_id: str) -> None:
    """Send the run's next slice once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _send(run_id), robust=True)


def _send(run_id: str) -> None:
    if not current_app.conf.task_always_eager:
        current_app.send_task(RUN_TASK, (run_id,))
        return
    tenant_id = AgentRun.all_tenants.filter(run_id=run_id).values_list("tenant_id", flat=True).first()
    if tenant_id is not None:  # deleted meanwhile (with its agent): nothing to run
        in_process_pool().submit(tenant_id, _run_in_process, run_id)


def in_process_pool() -> FairPool:
    """This process's agent run threads (built on first use, from the settings of that moment)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = FairPool(
                "agent-run", settings.AGENT_RUN_IN_PROCESS_WORKERS, settings.AGENT_RUN_TENANT_SHARE
            )
        return _pool


def _run_in_process(run_id: str) -> None:
    # Imported here: execution brings pydantic-ai and the providers' SDKs (~1 s of CPU to import),
    # which the API and every manage.py command that loads the URLs would otherwise pay.
    from agents.execution import execute_run

    try:
        execute_run(run_id)
    except Exception:  # the top of a run thread: the sweep fails a run left behind
        logger.exception("Agent run %s failed in-process", run_id)
    finally:
        close_old_connections()
