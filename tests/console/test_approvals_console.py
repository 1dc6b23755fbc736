"""The console's approvals: the pending list for the caller and for whoever may decide, one
approval's page with its question, and its Approve / Deny buttons (the same policy as the API)."""

from __future__ import annotations

import pytest

from mcp_gateway.models import Approval
from mcp_gateway.tools.call.calls import call_tool
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.mcp_gateway.test_approvals import CHECKED, _manifest
from tests.mcp_gateway.test_confirmation import FILES, WIPE

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(acme, make_member, deploy):
    make_member(acme, "auditor", roles=["auditor"])
    deploy(acme, _manifest(), FILES)
    caller = caller_for(acme, access_user("reader"))
    plain = call_tool(acme, caller, WIPE, {"account": "a1"}).structured_content["approval"]
    checked = call_tool(acme, caller, CHECKED, {"account": "a2"}).structured_content["approval"]
    return plain["id"], checked["id"]


def test_the_pending_list_shows_the_callers_and_the_deciders_approvals(signed_in, asked):
    plain, checked = asked

    own = signed_in("reader").get("/console/acme/approvals/").content.decode()
    auditor = signed_in("auditor").get("/console/acme/approvals/").content.decode()
    other = signed_in("writer").get("/console/acme/approvals/").content.decode()

    assert plain in own and checked in own
    assert checked in auditor and plain not in auditor
    assert plain not in other and checked not in other and "Nothing waits" in other


def test_approving_in_the_console_lets_the_call_run_once(acme, signed_in, asked):
    plain, _ = asked
    client = signed_in("reader")
    page = client.get(f"/console/acme/approvals/{plain}").content.decode()
    assert "&quot;a1&quot;" in page and "Approve" in page

    client.post(f"/console/acme/approvals/{plain}/decide", {"decision": "approve"})

    assert Approval.all_tenants.get(public_id=plain).status == "approved"
    ran = call_tool(acme, caller_for(acme, access_user("reader")), WIPE, {"account": "a1"})
    assert ran.is_error is False


def test_four_eyes_and_strangers_in_the_console(signed_in, asked):
    plain, checked = asked

    refused = signed_in("reader").post(
        f"/console/acme/approvals/{checked}/decide", {"decision": "approve"}, follow=True
    )

    assert "your own call" in refused.content.decode()
    assert Approval.all_tenants.get(public_id=checked).status == "pending"
    assert signed_in("writer").get(f"/console/acme/approvals/{plain}").status_code == 404
    assert (
        signed_in("writer")
        .post(f"/console/acme/approvals/{plain}/decide", {"decision": "approve"})
        .status_code
        == 404
    )
    assert (
        signed_in("auditor")
        .post(f"/console/acme/approvals/{checked}/decide", {"decision": "deny"})
        .status_code
        == 302
    )
    assert Approval.all_tenants.get(public_id=checked).status == "denied"
