"""Agent runs are bounded storage: a finished run and its steps go RETENTION_AGENT_RUN_DAYS after it ended."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from agents.models import AgentRun, AgentRunStep

pytestmark = pytest.mark.django_db


def _run(tenant, agent, run_id: str, status: str, ended_days_ago: float | None) -> AgentRun:
    ended = None if ended_days_ago is None else timezone.now() - timedelta(days=ended_days_ago)
    run = AgentRun.objects.create(
        tenant=tenant, agent=agent, input="hi", run_id=run_id, status=status, finished_at=ended
    )
    for index in range(2):
        AgentRunStep.objects.create(run=run, index=index, kind="model", text="turn")
    return run


def test_finished_runs_past_their_retention_go_with_their_steps(acme, make_agent, settings):
    settings.RETENTION_AGENT_RUN_DAYS = 30
    agent = make_agent(acme)
    _run(acme, agent, "arun_old_done", "completed", 31)
    _run(acme, agent, "arun_old_failed", "failed", 45)
    _run(acme, agent, "arun_old_cancelled", "cancelled", 30.5)
    _run(acme, agent, "arun_recent", "completed", 29)
    _run(acme, agent, "arun_waiting", "awaiting_approval", None)
    AgentRun.all_tenants.filter(run_id="arun_waiting").update(created_at=timezone.now() - timedelta(days=90))

    out = StringIO()
    call_command("purge_expired", stdout=out)
    counts = json.loads(out.getvalue())

    kept = sorted(AgentRun.objects.for_tenant(acme).values_list("run_id", flat=True))
    assert kept == ["arun_recent", "arun_waiting"]
    assert (counts["agent_runs"], counts["agent_run_steps"]) == (3, 6)
    assert AgentRunStep.objects.filter(run__run_id__in=kept).count() == 4


def test_the_retention_is_a_setting(acme, make_agent, settings):
    agent = make_agent(acme)
    _run(acme, agent, "arun_week_old", "completed", 7)
    call_command("purge_expired", stdout=StringIO())
    assert AgentRun.objects.for_tenant(acme).count() == 1  # the default keeps it (30 days)

    settings.RETENTION_AGENT_RUN_DAYS = 6
    call_command("purge_expired", stdout=StringIO())
    assert AgentRun.objects.for_tenant(acme).count() == 0
