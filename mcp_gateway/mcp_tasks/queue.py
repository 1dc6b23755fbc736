"""Sending task runs: to Celery once the task row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
``tools/call``: the caller is promised an answer at once. So it goes to a small pool of threads of
the server (``core.background``: TASK_IN_PROCESS_WORKERS), shared fairly: a tenant runs at most
TASK_TENANT_SHARE tasks at once, and the tenants' queues are served in turn, so one tenant's long
tasks never hold another tenant's task back (inside a tenant, its members' queues in turn). A run
lost there with the process is found by the sweep.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from core.background import Dispatcher
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolTask

RUN_TASK = "mcp_gateway.run_tool_task"  # the Celery task of ``mcp_gateway/tasks.py``


def _tenant_of(task_id: str) -> Hashable | None:
    return ToolTask.all_tenants.filter(task_id=task_id).values_list("tenant_id", flat=True).first()


def _member_of(task_id: str) -> Hashable:
    return ToolTask.all_tenants.filter(task_id=task_id).values_list("member", flat=True).first()


runs = Dispatcher(
    "mcp-task",
    task_name=RUN_TASK,
    tenant_of=_tenant_of,
    run=execute_task,
    workers_setting="TASK_IN_PROCESS_WORKERS",
    share_setting="TASK_TENANT_SHARE",
    member_of=_member_of,
)


def send_on_commit(task_ids: Iterable[str]) -> None:
    """Send a run for each task once the current transaction commits (at once outside one)."""
    runs.send_on_commit(task_ids)
