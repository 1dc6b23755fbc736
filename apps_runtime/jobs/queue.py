"""Sending ``run_job`` tasks, always after the rows they name are committed.

A task sent before its row commits could reach a worker that cannot see the row yet. A send that
fails (the broker is down) is logged, not raised: the run stays queued and the reaper sends it again.

With no broker (the embedded default) runs execute in this process, on a small pool of threads
(``core.background``: ``JOBS_IN_PROCESS_WORKERS``) shared fairly between tenants: a tenant runs at
most ``JOBS_TENANT_SHARE`` of them at once and the tenants' queues are served in turn (inside a
tenant, its members' in turn). Never in the thread that sends them: that is the request's (a
gateway thread of the tool call, charged to the tenant's share of tool calls), and a handler
queuing its own route would keep that call, and its thread, busy for as long as the chain runs,
even after the client left. With the default share of one, runs queued by a run start after it has
finished, never inside it.

The run itself is the Celery task ``RUN_TASK``, found by name in Celery's registry (its module,
``apps_runtime.tasks``, imports the route runtime, which sends through this module: the app's
``ready`` imports it, so every process has it registered).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from celery import current_app

from apps_runtime.models import JobRun
from core.background import Dispatcher

RUN_TASK = "apps_runtime.run_job"  # the Celery task of ``apps_runtime/tasks.py``


def _tenant_of(run_id: str) -> Hashable | None:
    return JobRun.all_tenants.filter(run_id=run_id).values_list("tenant_id", flat=True).first()


def _member_of(run_id: str) -> Hashable:
    return JobRun.all_tenants.filter(run_id=run_id).values_list("member", flat=True).first()


def _apply(run_id: str) -> None:
    # Through Celery, as a worker would run it: its signals give the run's log lines a trace id.
    current_app.tasks[RUN_TASK].apply((run_id,), throw=True)


runs = Dispatcher(
    "job-run",
    task_name=RUN_TASK,
    tenant_of=_tenant_of,
    run=_apply,
    workers_setting="JOBS_IN_PROCESS_WORKERS",
    share_setting="JOBS_TENANT_SHARE",
    nice=10,  # runs are background work: requests being answered go first
    member_of=_member_of,
)


def send_on_commit(run_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """Send a ``run_job`` task for each run once the current transaction commits (at once outside one)."""
    runs.send_on_commit(run_ids, countdown=countdown)
