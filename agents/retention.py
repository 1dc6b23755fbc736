"""Bounded storage of agent runs: a finished run (completed, failed, cancelled) goes with its steps
``RETENTION_AGENT_RUN_DAYS`` after it ended (registered with ``core.retention`` in
``AgentsConfig.ready``). Runs still queued, running or awaiting an approval are never purged: the
sweep ends the ones that are lost.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from agents.models import FINISHED, AgentRun, AgentRunStep
from core.retention import cutoff


def purge(now: datetime) -> dict[str, int]:
    """Delete finished runs past their retention, and their steps."""
    ended = AgentRun.all_tenants.filter(
        status__in=FINISHED, finished_at__lt=cutoff(settings.RETENTION_AGENT_RUN_DAYS, now)
    )
    _, by_model = ended.delete()
    return {
        "agent_runs": by_model.get(AgentRun._meta.label, 0),
        "agent_run_steps": by_model.get(AgentRunStep._meta.label, 0),
    }
