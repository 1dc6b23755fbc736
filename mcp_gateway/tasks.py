"""Celery tasks of the gateway: the run of an MCP task and the upkeep of MCP tasks."""

from __future__ import annotations

import logging

from celery import shared_task

from mcp_gateway.mcp_tasks import queue as task_queue
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.approval_waits import settle_due
from mcp_gateway.mcp_tasks.runs import audit_lost, execute_task

logger = logging.getLogger("mcp_gateway.tasks")


@shared_task(name=task_queue.RUN_TASK, ignore_result=True)
def run_tool_task(task_id: str) -> None:
    """Run a queued MCP task (a no-op for one already started, ended or purged)."""
    execute_task(task_id)


@shared_task(name="mcp_gateway.sweep_tool_tasks", ignore_result=True)
def sweep_tool_tasks() -> dict:
    """Beat's entry, every minute: see ``task_store.sweep``."""
    return sweep()


def sweep() -> dict:
    """Send forgotten runs again, fail and audit lost ones, settle the tasks waiting on an approval
    that expired or was decided (``approval_waits.settle_due``), purge expired tasks."""
    settled = settle_due()
    swept = task_store.sweep()
    for task in swept.lost:
        audit_lost(task)
    task_queue.send_on_commit(swept.resend)
    counts = {"resent": len(swept.resend), "lost": len(swept.lost), "purged": swept.purged}
    return {**counts, "approvals_settled": settled}
