"""MCP tasks in the database: claimed once, cancel against a finishing run, and the sweep after a crash."""

from __future__ import annotations

from datetime import timedelta
from typing import get_args

import mcp.types as types
import pytest
from django.utils import timezone

from mcp_gateway.exceptions import InvalidCursor, TaskFinished, TaskLimitReached, TaskNotFound
from mcp_gateway.mcp_tasks import calls as task_calls
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.models import ToolCallAudit, ToolTask
from mcp_gateway.tasks import sweep
from tenants.callers import caller_for_token

WIRE = "acme_reports_slow_report"


@pytest.fixture
def caller(acme, make_token):
    return lambda username="reader": caller_for_token(acme, make_token(acme, username)[1])


def make(acme, who, **arguments):
    return task_store.create(acme, who, WIRE, arguments, ttl_ms=None)


def test_the_stored_statuses_are_the_protocols_task_statuses():
    # task_calls.task_model sends the stored status as it is.
    assert set(ToolTask.Status.values) == set(get_args(types.TaskStatus))


def test_a_task_is_claimed_by_one_delivery_only(acme, caller):
    task = make(acme, caller())
    twin = ToolTask.all_tenants.get(pk=task.pk)  # a duplicate delivery read the row too
    assert task_store.claim(task, 1000) is True
    assert task_store.claim(twin, 1000) is False


def test_a_run_ending_after_a_cancel_does_not_overwrite_it(acme, caller):
    who = caller()
    task = make(acme, who)
    task_store.claim(task, 1000)
    task_store.cancel(acme, who, task.task_id)
    assert task_store.finish(task, {"content": []}, 15, failed=False) is False
    assert ToolTask.all_tenants.get(pk=task.pk).status == "cancelled"
    with pytest.raises(TaskFinished):
        task_store.cancel(acme, who, task.task_id)


def test_another_credential_of_the_same_user_does_not_find_the_task(acme, caller):
    task = make(acme, caller("reader"))
    with pytest.raises(TaskNotFound):
        task_store.owned(acme, caller("reader"), task.task_id)


def test_the_ttl_is_clamped_to_the_maximum_and_defaults(acme, caller, settings):
    settings.TASK_MAX_TTL_MS, settings.TASK_DEFAULT_TTL_MS = 5000, 2000
    who = caller()
    assert task_store.create(acme, who, WIRE, {}, ttl_ms=10**12).ttl_ms == 5000
    assert task_store.create(acme, who, WIRE, {}, ttl_ms=None).ttl_ms == 2000


def test_the_tenant_cap_counts_every_callers_unfinished_tasks(acme, caller, settings):
    settings.TASK_MAX_ACTIVE_PER_TENANT = 2
    make(acme, caller("reader"))
    make(acme, caller("writer"))
    with pytest.raises(TaskLimitReached) as raised:
        make(acme, caller("admin"))
    assert raised.value.scope == "tenant"


def test_the_sweep_fails_a_lost_run_resends_a_forgotten_one_and_purges_expired_ones(acme, caller, settings):
    settings.TASK_RESEND_SECONDS = 60
    who = caller()
    lost, forgotten, expired = make(acme, who), make(acme, who), make(acme, who)
    task_store.claim(lost, 100)
    past = timezone.now() - timedelta(minutes=5)
    ToolTask.all_tenants.filter(pk=lost.pk).update(deadline=past)
    ToolTask.all_tenants.filter(pk=forgotten.pk).update(updated_at=past)
    ToolTask.all_tenants.filter(pk=expired.pk).update(expires_at=past)

    swept = task_store.sweep()

    assert swept.resend == [forgotten.task_id]
    assert [task.task_id for task in swept.lost] == [lost.task_id]
    assert swept.purged == 1
    row = ToolTask.all_tenants.get(pk=lost.pk)
    assert row.status == "failed" and row.result["isError"] is True
    assert row.result["content"][0]["text"] == task_store.LOST_MESSAGE
    assert not ToolTask.all_tenants.filter(pk=expired.pk).exists()


def test_a_lost_run_is_audited_as_a_platform_error(acme, caller, transactional_db):
    task = make(acme, caller())
    task_store.claim(task, 100)
    ToolTask.all_tenants.filter(pk=task.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    assert sweep()["lost"] == 1
    audit = ToolCallAudit.all_tenants.get(wire_name=WIRE)
    assert audit.outcome == ToolCallAudit.Outcome.PLATFORM_ERROR


def test_operators_see_tasks_in_the_admin_without_their_results(admin_client, acme, caller):
    task = make(acme, caller(), secret="not for the admin")
    listing = admin_client.get("/admin/mcp_gateway/tooltask/")
    assert listing.status_code == 200 and task.task_id in listing.content.decode()
    page = admin_client.get(f"/admin/mcp_gateway/tooltask/{task.pk}/change/")
    assert page.status_code == 200 and "not for the admin" not in page.content.decode()


def test_the_callers_tasks_come_newest_first_a_page_at_a_time(acme, caller):
    who = caller()
    ids = [make(acme, who).task_id for _ in range(3)]
    first, cursor = task_store.page(acme, who, None, 2)
    rest, end = task_store.page(acme, who, cursor, 2)
    assert [t.task_id for t in first + rest] == ids[::-1]
    assert end is None
    with pytest.raises(InvalidCursor):
        task_store.page(acme, who, "bm9wZQ==", 2)


def test_an_expired_task_is_not_found_before_the_sweep_purges_it(acme, caller):
    who = caller()
    task = make(acme, who)
    ToolTask.all_tenants.filter(pk=task.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(TaskNotFound):
        task_store.owned(acme, who, task.task_id)
    assert task_store.page(acme, who, None, 10) == ([], None)


def test_polling_a_task_whose_run_was_lost_ends_it_failed_without_waiting_for_the_sweep(acme, caller):
    who = caller()
    task = make(acme, who)
    task_store.claim(task, 100)
    ToolTask.all_tenants.filter(pk=task.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    polled = task_calls.get_task(acme, who, task.task_id)
    assert polled.status == "failed" and polled.status_message == task_store.LOST_MESSAGE
    payload = task_calls.task_payload(acme, who, task.task_id)
    assert payload["isError"] is True
    assert ToolCallAudit.all_tenants.get(wire_name=WIRE).outcome == ToolCallAudit.Outcome.PLATFORM_ERROR
