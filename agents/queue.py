"""Sending run slices: to Celery once the run row is committed, or to this process's run threads.

Without a broker (the embedded default) a run must not execute in the thread that answers the
request: the caller is promised a 202 at once. So it goes to a small pool of threads of the server,
shared fairly by tenants (``core.background``: AGENT_RUN_IN_PROCESS_WORKERS threads, at most
AGENT_RUN_TENANT_SHARE of them for one tenant); a run lost there with the process is found by the sweep.
"""

from __future__ import annotations

from collections.abc import Hashable

from agents.models import AgentRun
from core.background import Dispatcher

RUN_TASK = "agents.execute_run"  # the Celery task of ``agents/tasks.py``


def _tenant_of(run_id: str) -> Hashable | None:
    return AgentRun.all_tenants.filter(run_id=run_id).values_list("tenant_id", flat=True).first()


def _execute(run_id: str) -> None:
    # Imported here: execution brings pydantic-ai and the providers' SDKs (~1 s of CPU to import),
    # which the API and every manage.py command that loads the URLs would otherwise pay.
    from agents.execution import execute_run

    execute_run(run_id)


runs = Dispatcher(
    "agent-run",
    task_name=RUN_TASK,
    tenant_of=_tenant_of,
    run=_execute,
    workers_setting="AGENT_RUN_IN_PROCESS_WORKERS",
    share_setting="AGENT_RUN_TENANT_SHARE",
)


def send_on_commit(run_id: str) -> None:
    """Send the run's next slice once the current transaction commits (at once outside one)."""
    runs.send_on_commit([run_id])
