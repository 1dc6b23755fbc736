"""Issue 26 item 2: MCP tasks with no broker share the task threads fairly between tenants, wait a
bounded time, and each member's credentials count together against the task caps."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from mcp_gateway.exceptions import TaskLimitReached
from mcp_gateway.mcp_tasks import queue as task_queue
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolCallAudit, ToolTask
from tenants.callers import caller_for_token
from tests.support.task_app import TASK_FILES, task_manifest

SLOW = "{prefix}_reports_slow_report"


@pytest.fixture
def two_tenants(acme, make_tenant, make_member, make_token, deploy):
    other = make_tenant("other")
    make_member(other, "bob", roles=["case_reader"])
    for tenant in (acme, other):
        deploy(tenant, task_manifest(), TASK_FILES)
    return {
        "acme": (acme, caller_for_token(acme, make_token(acme, "reader")[1])),
        "other": (other, caller_for_token(other, make_token(other, "bob")[1])),
    }


@pytest.fixture
def pool(settings, monkeypatch):
    """A fresh in-process task pool: two threads, one per tenant at a time (the defaults)."""
    settings.TASK_IN_PROCESS_WORKERS, settings.TASK_TENANT_SHARE = 2, 1
    task_queue.runs.forget_pool()
    yield lambda: task_queue.runs.in_process_pool()
    assert task_queue.runs.in_process_pool().wait_idle(60)


def start(tenant, caller, seconds: float, label: str) -> ToolTask:
    wire = SLOW.format(prefix=tenant.mcp_prefix)
    task = task_store.create(tenant, caller, wire, {"seconds": seconds, "label": label}, ttl_ms=None)
    task_queue.send_on_commit([task.task_id])  # outside a transaction: sent at once
    return task


@pytest.mark.django_db(transaction=True)
def test_one_tenants_long_tasks_do_not_hold_another_tenants_task_back(two_tenants, pool):
    acme, acme_caller = two_tenants["acme"]
    other, other_caller = two_tenants["other"]
    long = [start(acme, acme_caller, 2, f"long {n}") for n in range(3)]
    quick = start(other, other_caller, 0, "quick")

    deadline = timezone.now() + timedelta(seconds=60)
    while ToolTask.all_tenants.get(pk=quick.pk).status == "working":
        assert timezone.now() < deadline, "the other tenant's task never ran"
        pool().wait_idle(0.05)
    # It finished while acme's backlog was still waiting: acme holds one thread, not both.
    assert ToolTask.all_tenants.get(pk=quick.pk).status == "completed"
    assert ToolTask.all_tenants.get(pk=long[2].pk).started_at is None
    assert pool().wait_idle(60)
    assert {t.status for t in ToolTask.all_tenants.filter(pk__in=[t.pk for t in long])} == {"completed"}


@pytest.mark.django_db(transaction=True)
def test_a_task_that_waited_too_long_for_its_share_fails_without_running(two_tenants, settings):
    settings.TASK_QUEUE_SECONDS = 60
    acme, caller = two_tenants["acme"]
    task = task_store.create(
        acme, caller, SLOW.format(prefix=acme.mcp_prefix), {"seconds": 0, "label": "x"}, None
    )
    ToolTask.all_tenants.filter(pk=task.pk).update(created_at=timezone.now() - timedelta(seconds=61))

    execute_task(task.task_id)

    row = ToolTask.all_tenants.get(pk=task.pk)
    assert row.status == "failed" and row.started_at is None
    assert "stayed busy for 60 s" in row.result["content"][0]["text"]
    assert (
        ToolCallAudit.all_tenants.get(wire_name=task.wire_name).outcome == ToolCallAudit.Outcome.RATE_LIMITED
    )


@pytest.mark.django_db
def test_a_tenant_may_keep_only_so_many_tasks_waiting_to_start(two_tenants, make_token, settings):
    """Each member holds at most their share of the waiting tasks (2 of 4 at 50 %): the tenant's
    queue fills only with several members' tasks (issue 35: one member filled it alone)."""
    settings.TASK_MAX_QUEUED_PER_TENANT, settings.TENANT_MEMBER_SHARE_PERCENT = 4, 50
    acme, caller = two_tenants["acme"]
    wire = SLOW.format(prefix=acme.mcp_prefix)
    for _ in range(2):
        task_store.create(acme, caller, wire, {"seconds": 0, "label": "x"}, None)
    with pytest.raises(TaskLimitReached) as raised:
        task_store.create(acme, caller, wire, {"seconds": 0, "label": "x"}, None)
    assert raised.value.scope == "member_queue" and "(2 per member" in str(raised.value)
    admin = caller_for_token(acme, make_token(acme, "admin")[1])
    for _ in range(2):
        task_store.create(acme, admin, wire, {"seconds": 0, "label": "x"}, None)
    writer = caller_for_token(acme, make_token(acme, "writer")[1])
    with pytest.raises(TaskLimitReached) as raised:
        task_store.create(acme, writer, wire, {"seconds": 0, "label": "x"}, None)
    assert raised.value.scope == "queue" and "waiting to start (4 per workspace)" in str(raised.value)
    other, other_caller = two_tenants["other"]
    task_store.create(
        other, other_caller, SLOW.format(prefix=other.mcp_prefix), {"seconds": 0, "label": "x"}, None
    )


@pytest.mark.django_db
def test_a_members_credentials_count_together_against_the_task_cap(acme, make_token, deploy, settings):
    """Issue 26 item 3: more tokens or OAuth connections do not give one member more tasks."""
    settings.TASK_MAX_ACTIVE_PER_CALLER, settings.TASK_MAX_ACTIVE_PER_MEMBER = 2, 3
    deploy(acme, task_manifest(), TASK_FILES)
    wire = SLOW.format(prefix=acme.mcp_prefix)
    tokens = [caller_for_token(acme, make_token(acme, "reader")[1]) for _ in range(3)]
    for caller in (tokens[0], tokens[0], tokens[1]):
        task_store.create(acme, caller, wire, {"seconds": 0, "label": "x"}, None)
    with pytest.raises(TaskLimitReached) as raised:
        task_store.create(acme, tokens[2], wire, {"seconds": 0, "label": "x"}, None)
    assert raised.value.scope == "member"
    admin = caller_for_token(acme, make_token(acme, "admin")[1])
    task_store.create(acme, admin, wire, {"seconds": 0, "label": "x"}, None)  # another member is not held
