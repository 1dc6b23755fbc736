"""Celery tasks of the gateway: the run of an MCP task, the upkeep of MCP tasks, and the platform's purge."""

from __future__ import annotations

import logging
import time

from celery import shared_task

from mcp_gateway.mcp_tasks import queue as task_queue
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.runs import audit_lost, execute_task
from mcp_gateway.retention import purge_expired as purge_expired_rows

logger = logging.getLogger("mcp_gateway.tasks")

PURGE_EVERY_S = 3600.0
_last_purge: float | None = None


@shared_task(name=task_queue.RUN_TASK, ignore_result=True)
def run_tool_task(task_id: str) -> None:
    """Run a queued MCP task (a no-op for one already started, ended or purged)."""
    execute_task(task_id)


@shared_task(name="mcp_gateway.sweep_tool_tasks", ignore_result=True)
def sweep_tool_tasks() -> dict:
    """Beat's entry, every minute: see ``task_store.sweep``."""
    return sweep()


def sweep() -> dict:
    """Send forgotten runs again, fail and audit lost ones, purge expired tasks."""
    swept = task_store.sweep()
    for task in swept.lost:
        audit_lost(task)
    task_queue.send_on_commit(swept.resend)
    return {"resent": len(swept.resend), "lost": len(swept.lost), "purged": swept.purged}


@shared_task(name="mcp_gateway.purge_expired", ignore_result=True)
def purge_expired() -> dict:
    """Beat's entry, every hour: see ``mcp_gateway.retention.purge_expired``."""
    purged = purge_expired_rows()
    logger.info("Purged expired rows: %s", purged)
    return purged


def purge_if_due() -> dict | None:
    """For the in-process clock (no broker, no beat), which ticks every minute: purge once an hour."""
    global _last_purge
    now = time.monotonic()
    if _last_purge is not None and now - _last_purge < PURGE_EVERY_S:
        return None
    _last_purge = now
    return purge_expired()
