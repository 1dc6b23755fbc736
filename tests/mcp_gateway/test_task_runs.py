"""The run of an MCP task: once, as its creator with their rights at the start, nothing once revoked."""

from __future__ import annotations

import pytest

from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.callers import CREDENTIAL_GONE
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolCallAudit, ToolTask
from tenants import actions
from tenants.callers import caller_for_token
from tenants.models import ApiToken, Membership
from tests.support.task_app import TASK_FILES, task_manifest

SLOW = "acme_reports_slow_report"
ARGUMENTS = {"seconds": 0, "label": "direct"}


@pytest.fixture
def task(acme, deploy, make_token):
    deploy(acme, task_manifest(), TASK_FILES)
    token, raw = make_token(acme, "reader")
    created = task_store.create(acme, caller_for_token(acme, raw), SLOW, ARGUMENTS, ttl_ms=None)
    return created, token


def test_a_run_completes_once_and_a_second_delivery_does_nothing(task):
    created, _ = task
    execute_task(created.task_id)
    execute_task(created.task_id)
    row = ToolTask.all_tenants.get(pk=created.pk)
    assert row.status == "completed"
    assert row.result["structuredContent"] == {"label": "direct", "slept": 0}
    assert ToolCallAudit.all_tenants.filter(wire_name=SLOW).count() == 1


def test_a_task_whose_token_was_revoked_before_its_run_runs_nothing(task, acme):
    created, token = task
    actions.revoke_token(token, acting_user=None)
    execute_task(created.task_id)
    row = ToolTask.all_tenants.get(pk=created.pk)
    assert row.status == "failed"
    assert row.result["content"][0]["text"] == CREDENTIAL_GONE
    audit = ToolCallAudit.all_tenants.get(wire_name=SLOW)
    assert audit.outcome == ToolCallAudit.Outcome.DENIED


def test_a_run_acts_with_the_roles_its_creator_holds_when_it_starts(task, acme):
    created, _ = task
    actions.update_member(acme, "reader", roles=[], acting_user=None)
    execute_task(created.task_id)
    row = ToolTask.all_tenants.get(pk=created.pk)
    assert row.status == "failed" and "Unknown tool" in row.result["content"][0]["text"]


def test_a_task_whose_creator_left_the_tenant_runs_nothing_even_with_their_token_unrevoked(task, acme):
    created, token = task
    Membership.objects.for_tenant(acme).filter(user__username="reader").delete()  # e.g. through /admin/
    assert ApiToken.objects.for_tenant(acme).get(pk=token.pk).revoked_at is None
    execute_task(created.task_id)
    row = ToolTask.all_tenants.get(pk=created.pk)
    assert row.status == "failed"
    assert row.result["content"][0]["text"] == CREDENTIAL_GONE
    assert ToolCallAudit.all_tenants.get(wire_name=SLOW).outcome == ToolCallAudit.Outcome.DENIED
