"""MCP tasks of a ``confirm`` tool from a client that cannot be asked: the task waits
``input_required`` on an approval of its own until a person decides it; approved, it runs once and
completes; denied or expired, it ends with the reason. Through the official SDK client (no
elicitation capability) against the live server, in both protocol eras, the decisions through the
approvals API over plain HTTP."""

from __future__ import annotations

import datetime as dt
import re

import anyio
import mcp.types as types
import pytest
from django.utils import timezone

from mcp_gateway import tasks as beat
from mcp_gateway.models import Approval, ToolTask
from tests.mcp_gateway.conftest import mcp_client
from tests.mcp_gateway.test_approvals import _manifest, decide, look
from tests.mcp_gateway.test_confirmation import FILES, WIPE_LATER, outcomes, runs
from tests.mcp_gateway.test_url_elicitation import UrlOnlyClient
from tests.support import tasks_extension as ext
from tests.support.task_client import create_task, get_task, send, wait_until_finished

ARGUMENTS = {"account": "acct-1"}
MODERN = "2026-07-28"


CHECKED_LATER = "acme_ledger_wipe_later_checked"


def _with_a_four_eyes_task_tool() -> dict:
    manifest = _manifest()
    later = next(tool for tool in manifest["mcp"]["tools"] if tool["name"] == "wipe_later")
    manifest["mcp"]["tools"].append({**later, "name": "wipe_later_checked", "approvers": "role:auditor"})
    return manifest


@pytest.fixture
def tokens(mcp_url, make_tenant, make_member, make_token, deploy):
    tenant = make_tenant("acme")
    for name in ("alice", "bob"):
        make_member(tenant, name)
    make_member(tenant, "carol", roles=["auditor"])
    make_member(tenant, "root", admin=True)
    deploy(tenant, _with_a_four_eyes_task_tool(), FILES)
    return {name: make_token(tenant, name)[1] for name in ("alice", "bob", "carol", "root")}


def tasks_client(url: str, token: str):
    return mcp_client(url, token, mode=MODERN, extensions=[ext.TasksClient()])


def approval_id_in(message: str) -> str:
    return re.findall(r"apr_[0-9a-z]+", message)[-1]


def created_waiting(
    url: str, token: str, ttl: int | None = None, name: str = WIPE_LATER
) -> types.CreateTaskResult:
    async def main():
        async with mcp_client(url, token) as client:  # no elicitation capability
            return await create_task(client, name, ARGUMENTS, ttl=ttl)

    return anyio.run(main)


def finished(url: str, token: str, task_id: str) -> tuple[types.GetTaskResult, types.CallToolResult]:
    async def main():
        async with mcp_client(url, token) as client:
            final = await wait_until_finished(client, task_id)
            payload = await send(client, types.GetTaskPayloadRequest(params={"taskId": task_id}))
            return final, types.CallToolResult.model_validate(payload)

    return anyio.run(main)


def test_a_task_waits_input_required_until_approved_then_runs_once(live_url, mcp_url, tokens, settings):
    settings.PUBLIC_BASE_URL = live_url
    created = created_waiting(mcp_url(), tokens["alice"], ttl=60_000)

    task = created.task
    assert task.status == "input_required" and runs() == 0
    approval_id = approval_id_in(task.status_message)
    assert f"{live_url}/console/acme/approvals/{approval_id}" in task.status_message
    assert task.ttl > 60_000  # it outlives its approval: a late decision still finds it
    assert [row["id"] for row in look(live_url, tokens["alice"]).json()] == [approval_id]

    async def still_waiting():
        async with mcp_client(mcp_url(), tokens["alice"]) as client:
            return await get_task(client, task.task_id)

    assert anyio.run(still_waiting).status == "input_required" and runs() == 0
    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 200

    final, result = finished(mcp_url(), tokens["alice"], task.task_id)
    assert final.status == "completed" and runs() == 1
    assert result.is_error is False and result.structured_content == {"wiped": "acct-1"}
    assert Approval.all_tenants.get(public_id=approval_id).status == Approval.Status.USED
    assert outcomes(WIPE_LATER) == ["approval_required", "confirmed"]
    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 409  # final, and used
    # The task's approval is its own: the same call made again asks anew and runs nothing.
    again = created_waiting(mcp_url(), tokens["alice"])
    assert again.task.status == "input_required" and approval_id_in(again.task.status_message) != approval_id
    assert runs() == 1


def test_a_four_eyes_task_waits_for_another_persons_approval(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["alice"], name=CHECKED_LATER)
    approval_id = approval_id_in(created.task.status_message)

    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 403  # their own call
    assert decide(live_url, tokens["bob"], approval_id, True).status_code == 404  # not an auditor
    assert ToolTask.all_tenants.get().status == ToolTask.Status.INPUT_REQUIRED and runs() == 0
    assert decide(live_url, tokens["carol"], approval_id, True).status_code == 200

    final, result = finished(mcp_url(), tokens["alice"], created.task.task_id)
    assert final.status == "completed" and result.is_error is False and runs() == 1


def test_tasks_result_waits_for_the_decision_and_answers_the_run(live_url, mcp_url, tokens, settings):
    settings.TASK_RESULT_WAIT_SECONDS = 30
    created = created_waiting(mcp_url(), tokens["alice"])
    approval_id = approval_id_in(created.task.status_message)

    async def main():
        async with mcp_client(mcp_url(), tokens["alice"]) as client:
            async with anyio.create_task_group() as group:
                # The person decides while the client's tasks/result is waiting.
                group.start_soon(
                    anyio.to_thread.run_sync, decide, live_url, tokens["root"], approval_id, True
                )
                request = types.GetTaskPayloadRequest(params={"taskId": created.task.task_id})
                return await send(client, request)

    result = types.CallToolResult.model_validate(anyio.run(main))
    assert result.is_error is False and result.structured_content == {"wiped": "acct-1"} and runs() == 1


def test_a_denied_task_ends_failed_with_who_denied_it(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["alice"])
    approval_id = approval_id_in(created.task.status_message)

    assert decide(live_url, tokens["root"], approval_id, False).status_code == 200

    final, result = finished(mcp_url(), tokens["alice"], created.task.task_id)
    assert final.status == "failed" and "root denied it" in final.status_message
    assert result.is_error is True and "root denied it" in result.content[0].text and runs() == 0
    assert outcomes(WIPE_LATER) == ["approval_required", "declined"]


def test_an_expired_approval_ends_the_task_with_the_reason_when_polled(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["alice"])
    approval_id = approval_id_in(created.task.status_message)
    Approval.all_tenants.update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    final, result = finished(mcp_url(), tokens["alice"], created.task.task_id)

    assert final.status == "failed" and "without a decision" in result.content[0].text and runs() == 0
    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 409
    assert outcomes(WIPE_LATER) == ["approval_required", "declined"]


def test_the_sweep_ends_a_task_whose_approval_expired_undecided(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["bob"])
    Approval.all_tenants.update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert beat.sweep()["approvals_settled"] == 1

    task = ToolTask.all_tenants.get(task_id=created.task.task_id)
    assert task.status == ToolTask.Status.FAILED and "without a decision" in task.status_message
    assert beat.sweep()["approvals_settled"] == 0
    assert outcomes(WIPE_LATER) == ["approval_required", "declined"]


def test_the_sweep_runs_a_task_whose_approval_was_decided_without_moving_it(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["alice"])
    # Decided in a process that died before its listener moved the task.
    Approval.all_tenants.update(status=Approval.Status.APPROVED, decided_at=timezone.now())

    assert beat.sweep()["approvals_settled"] == 1

    final, result = finished(mcp_url(), tokens["alice"], created.task.task_id)
    assert final.status == "completed" and result.is_error is False and runs() == 1


def test_a_cancelled_waiting_task_takes_its_approval_off_the_lists(live_url, mcp_url, tokens):
    created = created_waiting(mcp_url(), tokens["alice"])
    approval_id = approval_id_in(created.task.status_message)

    async def cancel():
        async with mcp_client(mcp_url(), tokens["alice"]) as client:
            return await send(client, types.CancelTaskRequest(params={"taskId": created.task.task_id}))

    assert anyio.run(cancel)["status"] == "cancelled"
    assert look(live_url, tokens["alice"]).json() == []
    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 409 and runs() == 0


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "denied"])
def test_2026_extension_task_waits_input_required_with_nothing_to_answer(live_url, mcp_url, tokens, approve):
    async def create():
        async with mcp_client(
            mcp_url(), tokens["alice"], mode="2026-07-28", extensions=[ext.TasksClient()]
        ) as c:
            created = await c.session.call_tool(WIPE_LATER, ARGUMENTS, allow_claimed=True)
            return created, await ext.get(c.session, created.task_id)

    created, waiting = anyio.run(create)
    assert created.status == "input_required" and waiting["status"] == "input_required"
    assert waiting["inputRequests"] == {}  # the person decides out of band, not the client
    approval_id = approval_id_in(waiting["statusMessage"])
    assert decide(live_url, tokens["alice"], approval_id, approve).status_code == 200

    async def final():
        async with mcp_client(
            mcp_url(), tokens["alice"], mode="2026-07-28", extensions=[ext.TasksClient()]
        ) as c:
            return await ext.wait_for(c.session, created.task_id)

    ended = anyio.run(final)
    # A refusal is the tool's kind of answer (isError), not a JSON-RPC error: "completed" in this era.
    assert ended["status"] == "completed" and "error" not in ended
    assert ended["result"]["isError"] is (not approve)
    assert runs() == (1 if approve else 0)
    if not approve:
        assert "alice denied it" in ended["result"]["content"][0]["text"]


def test_a_url_only_client_gets_the_waiting_task_not_a_url_question(live_url, mcp_url, tokens):
    async def never_asked(context, params):  # the task is how it waits; its URL is in statusMessage
        raise AssertionError("a task's approval is not asked by URL")

    async def main():
        async with mcp_client(
            mcp_url(), tokens["alice"], client_type=UrlOnlyClient, elicitation_callback=never_asked
        ) as client:
            return await create_task(client, WIPE_LATER, ARGUMENTS)

    created = anyio.run(main)

    assert (
        created.task.status == "input_required"
        and "/console/acme/approvals/apr_" in created.task.status_message
    )
    assert runs() == 0 and outcomes(WIPE_LATER) == ["approval_required"]


def test_tasks_waiting_on_approval_hold_no_place_in_the_workers_queue(live_url, mcp_url, tokens, settings):
    settings.TASK_MAX_QUEUED_PER_TENANT = 1  # read per call by the live server in this process

    first = created_waiting(mcp_url(), tokens["alice"])
    second = created_waiting(mcp_url(), tokens["bob"])

    assert first.task.status == second.task.status == "input_required"
