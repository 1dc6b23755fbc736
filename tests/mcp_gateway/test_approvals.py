"""Approval out of band: a confirm tool called by a client that cannot be asked waits for a person's
decision (console or API), then the same call runs once; denied, expired, four-eyes, others 404.

Through the official SDK client (without the elicitation capability) in both protocol eras, the
REST API over plain HTTP against the live server, and a plain JSON-RPC POST."""

from __future__ import annotations

import copy
import datetime as dt

import httpx2
import pytest
from django.utils import timezone

from mcp_gateway.models import Approval
from mcp_gateway.tools.call.calls import call_tool
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.mcp_gateway.test_confirmation import ERAS, FILES, MANIFEST, WIPE, call, outcomes, runs
from tests.support import mcp_wire as wire

CHECKED = "acme_ledger_wipe_checked"


def _manifest() -> dict:
    manifest = copy.deepcopy(MANIFEST)
    checked = copy.deepcopy(manifest["mcp"]["tools"][0])
    checked.update(name="wipe_checked", approvers="role:auditor", approvalTtl=120)
    manifest["mcp"]["tools"].append(checked)
    return manifest


@pytest.fixture
def ledger(mcp_url, make_tenant, make_member, deploy):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    make_member(tenant, "bob")
    make_member(tenant, "carol", roles=["auditor"])
    make_member(tenant, "root", admin=True)
    deploy(tenant, _manifest(), FILES)
    return tenant


@pytest.fixture
def tokens(ledger, make_token):
    return {name: make_token(ledger, name)[1] for name in ("alice", "bob", "carol", "root")}


def decide(live_url: str, token: str, approval_id: str, approve: bool) -> httpx2.Response:
    return httpx2.post(
        f"{live_url}/api/tenants/acme/approvals/{approval_id}",
        json={"approve": approve},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def look(live_url: str, token: str, approval_id: str = "") -> httpx2.Response:
    path = f"/{approval_id}" if approval_id else ""
    return httpx2.get(
        f"{live_url}/api/tenants/acme/approvals{path}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def approval_of(result) -> dict:
    assert result.is_error is True, result
    return result.structured_content["approval"]


@pytest.mark.parametrize("mode", ERAS)
def test_approved_in_the_api_the_same_call_runs_once_and_is_refused_on_replay(
    live_url, mcp_url, tokens, mode, settings
):
    settings.PUBLIC_BASE_URL = live_url  # read per call by the live server in this process
    asked = call(mcp_url(), tokens["alice"], mode)  # no elicitation capability
    approval = approval_of(asked)
    assert set(approval) == {"id", "url", "expiresAt"}
    assert approval["url"] == f"{live_url}/console/acme/approvals/{approval['id']}"
    assert approval["url"] in asked.content[0].text and runs() == 0

    waiting = call(mcp_url(), tokens["alice"], mode)  # asked again before a decision: the same one
    assert approval_of(waiting)["id"] == approval["id"] and runs() == 0
    decided = decide(live_url, tokens["alice"], approval["id"], True)
    assert decided.status_code == 200 and decided.json()["status"] == "approved"

    other_arguments = call(mcp_url(), tokens["alice"], mode, arguments={"account": "acct-2"})
    assert approval_of(other_arguments)["id"] != approval["id"] and runs() == 0
    ran = call(mcp_url(), tokens["alice"], mode)
    assert ran.is_error is False and ran.structured_content == {"wiped": "acct-1"} and runs() == 1
    replay = call(mcp_url(), tokens["alice"], mode)
    assert replay.is_error is True and "already ran once" in replay.content[0].text and runs() == 1
    assert outcomes() == ["approval_required"] * 3 + ["confirmed", "declined"]
    again = decide(live_url, tokens["alice"], approval["id"], False)
    assert again.status_code == 409  # a decision is final


@pytest.mark.parametrize("mode", ERAS)
def test_a_denied_call_is_refused_with_who_denied_it(live_url, mcp_url, tokens, mode):
    approval = approval_of(call(mcp_url(), tokens["alice"], mode))
    assert decide(live_url, tokens["root"], approval["id"], False).status_code == 200  # an admin may

    refused = call(mcp_url(), tokens["alice"], mode)

    assert refused.is_error is True and "root denied it" in refused.content[0].text
    assert runs() == 0
    assert approval_of(call(mcp_url(), tokens["alice"], mode))["id"] != approval["id"]  # asks anew


def test_an_expired_approval_is_refused_with_the_reason(live_url, mcp_url, tokens):
    approval = approval_of(call(mcp_url(), tokens["alice"], "legacy"))
    assert decide(live_url, tokens["alice"], approval["id"], True).status_code == 200
    Approval.all_tenants.filter(public_id=approval["id"]).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )

    refused = call(mcp_url(), tokens["alice"], "legacy")

    assert refused.is_error is True and "expired" in refused.content[0].text and runs() == 0
    late = decide(live_url, tokens["alice"], approval["id"], True)
    assert late.status_code == 409


def test_an_undecided_approval_expires_and_cannot_be_decided(live_url, mcp_url, tokens):
    approval = approval_of(call(mcp_url(), tokens["alice"], "2026-07-28"))
    Approval.all_tenants.filter(public_id=approval["id"]).update(
        expires_at=timezone.now() - dt.timedelta(seconds=1)
    )

    assert decide(live_url, tokens["alice"], approval["id"], True).status_code == 409
    refused = call(mcp_url(), tokens["alice"], "2026-07-28")
    assert "without a decision" in refused.content[0].text and runs() == 0


@pytest.mark.parametrize("mode", ERAS)
def test_four_eyes_the_caller_may_not_approve_their_own_call(live_url, mcp_url, tokens, mode):
    approval = approval_of(call(mcp_url(), tokens["alice"], mode, name=CHECKED))

    own = decide(live_url, tokens["alice"], approval["id"], True)
    assert own.status_code == 403 and "your own call" in own.json()["detail"]
    assert decide(live_url, tokens["bob"], approval["id"], True).status_code == 404  # not an auditor
    assert decide(live_url, tokens["carol"], approval["id"], True).status_code == 200  # role:auditor

    ran = call(mcp_url(), tokens["alice"], mode, name=CHECKED)
    assert ran.is_error is False and runs() == 1


def test_an_admin_may_not_approve_their_own_four_eyes_call(live_url, mcp_url, tokens):
    approval = approval_of(call(mcp_url(), tokens["root"], "legacy", name=CHECKED))
    assert decide(live_url, tokens["root"], approval["id"], True).status_code == 403
    assert decide(live_url, tokens["carol"], approval["id"], True).status_code == 200


def test_another_member_cannot_see_or_decide_it(live_url, mcp_url, tokens):
    approval = approval_of(call(mcp_url(), tokens["alice"], "legacy"))

    assert look(live_url, tokens["bob"], approval["id"]).status_code == 404
    assert decide(live_url, tokens["bob"], approval["id"], True).status_code == 404
    assert look(live_url, tokens["bob"]).json() == []
    assert [row["id"] for row in look(live_url, tokens["alice"]).json()] == [approval["id"]]
    assert [row["id"] for row in look(live_url, tokens["root"]).json()] == [approval["id"]]
    shown = look(live_url, tokens["alice"], approval["id"]).json()
    assert (
        shown["status"] == "pending" and shown["requestedBy"] == "alice" and '"acct-1"' in shown["question"]
    )
    assert call(mcp_url(), tokens["bob"], "legacy").structured_content["approval"]["id"] != approval["id"]


def test_an_approval_is_the_same_credentials(live_url, mcp_url, ledger, tokens, make_token):
    approval = approval_of(call(mcp_url(), tokens["alice"], "legacy"))
    decide(live_url, tokens["alice"], approval["id"], True)
    other_token = make_token(ledger, "alice")[1]

    other = call(mcp_url(), other_token, "legacy")

    assert approval_of(other)["id"] != approval["id"] and runs() == 0


def test_a_plain_json_rpc_post_gets_the_approval_result(live_url, mcp_url, tokens):
    message = wire.request("tools/call", {"name": WIPE, "arguments": {"account": "acct-9"}})
    headers = {**wire.modern_headers(tokens["alice"], message), "Accept": "application/json"}

    body = httpx2.post(mcp_url(), content=wire.encode(message), headers=headers, timeout=30).json()

    result = body["result"]
    assert result["isError"] is True and set(result["structuredContent"]["approval"]) == {
        "id",
        "url",
        "expiresAt",
    }
    approval_id = result["structuredContent"]["approval"]["id"]
    assert decide(live_url, tokens["alice"], approval_id, True).status_code == 200
    again = httpx2.post(mcp_url(), content=wire.encode(message), headers=headers, timeout=30).json()
    assert again["result"]["isError"] is False and runs() == 1


def test_an_approval_is_consumed_by_one_call(ledger, tokens):
    caller = caller_for(ledger, access_user("alice"))
    arguments = {"account": "acct-1"}
    approval = call_tool(ledger, caller, WIPE, arguments).structured_content["approval"]
    Approval.all_tenants.filter(public_id=approval["id"]).update(status=Approval.Status.APPROVED)

    first = call_tool(ledger, caller, WIPE, arguments)
    second = call_tool(ledger, caller, WIPE, arguments)

    assert first.is_error is False and second.is_error is True and runs() == 1


def test_pending_requests_per_member_are_bounded(ledger, tokens, settings):
    settings.APPROVALS_MAX_PENDING_PER_MEMBER = 2
    caller = caller_for(ledger, access_user("alice"))
    results = [call_tool(ledger, caller, WIPE, {"account": f"a{i}"}) for i in range(3)]
    assert [bool(r.structured_content) for r in results] == [True, True, False]
    assert "waiting for a decision" in results[2].content[0].text


def test_approvals_are_purged_with_the_audit_after_they_expire(ledger, tokens, settings):
    from core import retention

    caller = caller_for(ledger, access_user("alice"))
    call_tool(ledger, caller, WIPE, {"account": "old"})
    call_tool(ledger, caller, WIPE, {"account": "new"})
    old = timezone.now() - dt.timedelta(days=settings.RETENTION_AUDIT_DAYS + 1)
    Approval.all_tenants.filter(question__contains='"old"').update(expires_at=old)

    counts = retention.purge_all()

    assert counts["approvals"] == 1
    assert list(Approval.all_tenants.values_list("question", flat=True))[0].count('"new"') == 1


def test_an_agents_held_approval_lets_only_its_run_go_ahead(ledger, tokens):
    # The same member's own call of the same tool and arguments is another call: approving the
    # agent's held call does not let it run (it asks for an approval of its own).
    from mcp_gateway.tools.call.approvals import hold_for_agent, record_agent_decision

    alice = access_user("alice")
    caller = caller_for(ledger, alice)
    arguments = {"account": "acct-1"}
    hold_for_agent(ledger, caller, WIPE, arguments, "Wipe?", "run_1", 3)
    record_agent_decision("run_1", ledger.pk, 3, access_user("root"), True)

    own = call_tool(ledger, caller, WIPE, arguments)

    assert own.is_error is True and own.structured_content["approval"] and runs() == 0
