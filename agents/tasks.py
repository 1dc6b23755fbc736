"""Celery tasks of the agents: a slice of a run, and the sweep of lost and forgotten runs."""

from __future__ import annotations

from celery import shared_task

from agents import queue
from agents.runs import sweep


@shared_task(name=queue.RUN_TASK, ignore_result=True)
def execute_agent_run(run_id: str) -> None:
    """Run the next slice of a queued run (a no-op for one not queued)."""
    # Imported on the first run, not when the worker starts: see ``queue._execute``.
    from agents.execution import execute_run

    execute_run(run_id)


@shared_task(name="agents.sweep_runs", ignore_result=True)
def sweep_agent_runs() -> dict:
    """Beat's entry, every minute: see ``runs.sweep``."""
    return sweep()
