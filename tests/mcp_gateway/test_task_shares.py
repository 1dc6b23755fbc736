"""Issue 35 section 4: one member cannot fill the tenant's task caps alone.

Through task-augmented ``tools/call`` (the in-process SDK client) as two members of one tenant: the
first fills their share of the tasks waiting to start, or of the storage kept task results count
against, and the other member can still create a task, run it and keep its result. The other
member's service is measured before and during the flood, as a ratio (``MEASURED``).
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import mcp.types as types
import pytest

from mcp_gateway.mcp_tasks import queue as task_queue
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolTask
from mcp_gateway.transport.in_process import connect
from tests.support.task_app import TASK_FILES, task_manifest
from tests.support.task_client import send

pytestmark = pytest.mark.django_db(transaction=True)

MEASURED: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_measured():
    """Print the measured ratios once the module's tests have run (visible with ``-s``)."""
    yield
    for what, ratio in MEASURED.items():
        print(f"{what}: {ratio:.2f}")


SLOW = "acme_reports_slow_report"


@pytest.fixture
def members(acme, deploy, make_token) -> dict[str, str]:
    """The task app in acme; tokens of the flooding member (reader) and of the other one (admin)."""
    manifest = task_manifest()
    manifest["mcp"]["tools"][0]["maxOutputTokens"] = 1_000_000  # results of up to 1 MiB pass the budget
    deploy(acme, manifest, TASK_FILES)
    return {"flooder": make_token(acme, "reader")[1], "other": make_token(acme, "admin")[1]}


@pytest.fixture
def held(monkeypatch) -> list[str]:
    """Task runs are collected, not sent: tasks wait to start until the test runs them."""
    sent: list[str] = []
    monkeypatch.setattr(
        "mcp_gateway.mcp_tasks.queue.runs._send", lambda task_id, countdown, parent=None: sent.append(task_id)
    )
    return sent


def create(bearer: str, count: int, label: str = "x", seconds: float = 0) -> list[dict[str, Any]]:
    """``count`` task-augmented calls of the slow report: each answer, raw (a task, or an error)."""

    async def main():
        async with connect("acme", bearer) as client:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name=SLOW, arguments={"seconds": seconds, "label": label}, task=types.TaskMetadata()
                )
            )
            return [await send(client, request) for _ in range(count)]

    return anyio.run(main)


def result(bearer: str, task_id: str) -> dict[str, Any]:
    async def main():
        async with connect("acme", bearer) as client:
            return await send(client, types.GetTaskPayloadRequest(params={"taskId": task_id}))

    return anyio.run(main)


def run(bearer: str, label: str) -> dict[str, Any]:
    """One task of the member's: created over MCP, run as a task worker runs it, its result read."""
    [created] = create(bearer, 1, label)
    task_id = created["task"]["taskId"]
    execute_task(task_id)
    return result(bearer, task_id)


def accepted(answers: list[dict[str, Any]]) -> list[str]:
    return [answer["task"]["taskId"] for answer in answers if "task" in answer]


def test_a_member_holds_only_their_share_of_the_tasks_waiting_to_start(members, held, settings):
    """Issue 35: the task queue (20 per tenant) was the per-member cap too: one member filled it."""
    assert settings.TASK_MAX_QUEUED_PER_TENANT == 20  # the default: a member's share is 5
    before = create(members["other"], 3)
    before_rate = len(accepted(before)) / 3
    for task_id in accepted(before):
        execute_task(task_id)  # they ran: the other member waits on nothing

    flood = create(members["flooder"], 20)
    assert len(accepted(flood)) == 5
    refusal = flood[-1]
    assert refusal["isError"] and "(5 per member" in refusal["content"][0]["text"]
    during = create(members["other"], 3)
    during_rate = len(accepted(during)) / 3

    MEASURED["task queue: other member's tasks accepted, during / before"] = during_rate / before_rate
    assert before_rate == 1.0 and during_rate / before_rate == 1.0
    execute_task(accepted(during)[0])
    ran = result(members["other"], accepted(during)[0])
    assert not ran.get("isError") and ran["structuredContent"]["label"] == "x"


def test_a_member_keeps_results_only_within_their_share_of_the_storage_quota(members, held, settings):
    """Issue 35: one member's results filled the tenant's 64 MiB; another member's 600 kB task failed."""
    settings.TENANT_STORAGE_QUOTA_BYTES = 8_000_000  # a member's share: 2,000,000 bytes
    before = run(members["other"], "o" * 300_000)  # a result of about 600 kB (structured and text)
    assert not before.get("isError") and len(before["structuredContent"]["label"]) == 300_000

    flood = [run(members["flooder"], "f" * 300_000) for _ in range(5)]
    kept = [answer for answer in flood if not answer.get("isError")]
    assert len(kept) == 3  # 3 x 600 kB fit in 2 MB
    assert "your share of this workspace's storage" in flood[-1]["content"][0]["text"]
    during = run(members["other"], "p" * 300_000)

    stored = [not answer.get("isError") for answer in (before, during)]
    MEASURED["task results: other member's results kept, during / before"] = stored[1] / stored[0]
    assert stored == [True, True]
    assert len(during["structuredContent"]["label"]) == 300_000


@pytest.fixture
def pool(settings):
    """A fresh in-process task pool: two threads, one per tenant at a time (the defaults)."""
    settings.TASK_IN_PROCESS_WORKERS, settings.TASK_TENANT_SHARE = 2, 1
    task_queue.runs.forget_pool()
    yield task_queue.runs.in_process_pool
    assert task_queue.runs.in_process_pool().wait_idle(60)


def test_a_members_backlog_does_not_hold_another_members_task_back(members, pool):
    """The tenant's task thread serves its members in turn: the other member's task runs after at
    most one more of the flooder's, not after their whole backlog."""

    def timed(bearer: str) -> float:
        started = time.monotonic()
        [created] = create(bearer, 1)
        task_id = created["task"]["taskId"]
        while ToolTask.all_tenants.get(task_id=task_id).status == "working":
            assert time.monotonic() - started < 60, "the other member's task never ran"
            pool().wait_idle(0.02)
        return time.monotonic() - started

    timed(members["other"])  # the first run warms the app up: not a fair baseline
    before = timed(members["other"])
    flood = accepted(create(members["flooder"], 6, "f", seconds=0.5))
    during = timed(members["other"])

    waiting = ToolTask.all_tenants.filter(task_id__in=flood, started_at__isnull=True).count()
    MEASURED["task latency: other member's task, during / before (not asserted)"] = during / before
    MEASURED["task latency: other member's task before, s"] = before
    MEASURED["task latency: other member's task during (the flood's tasks take 0.5 s each), s"] = during
    assert len(flood) >= 5 and waiting >= 2  # it ran while most of the flood still waited
