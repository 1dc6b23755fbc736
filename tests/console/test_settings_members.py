"""Settings and members through the console: the same actions as the API, with their audit rows."""

from __future__ import annotations

import pytest

from tenants.models import Membership, Tenant, TenantAuditLog

pytestmark = pytest.mark.django_db


def settings_of(tenant) -> dict:
    return Tenant.objects.get(pk=tenant.pk).get_settings()


def test_the_settings_page_says_what_each_switch_does(signed_in, acme):
    body = signed_in("admin").get("/console/acme/settings/").content.decode()
    assert "Offer the tools of deployed apps over MCP" in body
    assert "Serve the tenant&#x27;s MCP endpoint" in body
    assert "Switch customAppsMcpTools off" in body
    assert "Ask the user before tools marked confirm run" in body
    assert "Switch confirmDestructiveTools off" in body


def test_switching_a_setting_goes_through_the_action(signed_in, acme):
    before = Tenant.objects.get(pk=acme.pk).state_version
    client = signed_in("admin")
    response = client.post("/console/acme/settings/set", {"key": "customAppsMcpTools", "value": "false"})
    assert response.status_code == 302
    assert settings_of(acme)["customAppsMcpTools"] is False
    assert Tenant.objects.get(pk=acme.pk).state_version > before
    row = TenantAuditLog.objects.for_tenant(acme).filter(action="setting.set").get()
    assert (row.acting_user.username, row.old_value, row.new_value) == ("admin", True, False)
    assert "customAppsMcpTools is now off." in client.get(response["Location"]).content.decode()


def test_an_integer_setting_is_typed_in_and_goes_through_the_action(signed_in, acme):
    client = signed_in("admin")
    assert 'name="value" value="20000"' in client.get("/console/acme/settings/").content.decode()
    response = client.post("/console/acme/settings/set", {"key": "maxOutputTokens", "value": "5000"})
    assert response.status_code == 302
    assert settings_of(acme)["maxOutputTokens"] == 5000
    assert "maxOutputTokens is now 5,000." in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "data",
    [
        {"key": "nope", "value": "true"},
        {"key": "mcpServer", "value": "maybe"},
        {"key": "maxOutputTokens", "value": "true"},
        {"key": "mcpServer", "value": "5000"},
        {},
    ],
)
def test_a_bad_setting_is_a_form_error(signed_in, acme, data):
    assert signed_in("admin").post("/console/acme/settings/set", data).status_code == 400
    assert settings_of(acme) == {
        "agentRunsPerDay": 100,
        "agentTokensPerDay": 1000000,
        "codeMode": True,
        "confirmDestructiveTools": True,
        "customAppsMcpTools": True,
        "maxOutputTokens": 20000,
        "mcpServer": True,
        "toolDiscovery": "list",
        "toolRateLimit": None,
    }


def test_members_cannot_switch_settings(signed_in, acme):
    response = signed_in("writer").post("/console/acme/settings/set", {"key": "mcpServer", "value": "false"})
    assert response.status_code == 404
    assert settings_of(acme)["mcpServer"] is True


def test_switching_a_setting_without_the_csrf_token_is_refused(signed_in, acme):
    client = signed_in("admin", csrf=True)
    assert (
        client.post("/console/acme/settings/set", {"key": "mcpServer", "value": "false"}).status_code == 403
    )
    assert settings_of(acme)["mcpServer"] is True


def test_the_settings_form_carries_the_csrf_token(signed_in, acme):
    client = signed_in("admin", csrf=True)
    body = client.get("/console/acme/settings/").content.decode()
    assert body.count('name="csrfmiddlewaretoken"') >= 2  # each switch's form, and sign-out
    token = client.cookies["csrftoken"].value
    data = {"key": "mcpServer", "value": "false", "csrfmiddlewaretoken": token}
    assert client.post("/console/acme/settings/set", data).status_code == 302


def roles_of(tenant, username):
    membership = Membership.objects.for_tenant(tenant).filter(user__username=username).first()
    return None if membership is None else (membership.roles, membership.is_admin)


def test_adding_a_member_creates_the_user_with_roles(signed_in, acme):
    data = {"username": "newbie", "roles": "case_reader, auditor", "admin": ""}
    response = signed_in("admin").post("/console/acme/members/add", data)
    assert response.status_code == 302
    assert roles_of(acme, "newbie") == (["auditor", "case_reader"], False)
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="member.set", target="newbie").exists()


@pytest.mark.parametrize(
    "data", [{"username": "bad name!", "roles": ""}, {"username": "x", "roles": "Bad-Role"}]
)
def test_a_bad_member_is_shown_on_the_form_with_the_actions_message(signed_in, acme, data):
    response = signed_in("admin").post("/console/acme/members/add", data)
    assert response.status_code == 400
    assert "is invalid" in response.content.decode()


def test_updating_roles_and_admin_flag(signed_in, acme):
    response = signed_in("admin").post(
        "/console/acme/members/reader/update", {"roles": "case_writer", "admin": "on"}
    )
    assert response.status_code == 302
    assert roles_of(acme, "reader") == (["case_writer"], True)


def test_updating_with_a_bad_role_keeps_the_member_as_it_was(signed_in, acme):
    response = signed_in("admin").post("/console/acme/members/reader/update", {"roles": "No Good"})
    assert response.status_code == 400
    assert roles_of(acme, "reader") == (["case_reader"], False)


def test_removing_a_member_revokes_their_tokens(signed_in, acme, make_token):
    token, _ = make_token(acme, "reader")
    response = signed_in("admin").post("/console/acme/members/reader/remove")
    assert response.status_code == 302
    assert roles_of(acme, "reader") is None
    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.mark.parametrize("action", ["update", "remove"])
def test_changing_an_unknown_member_is_404(signed_in, acme, action):
    assert signed_in("admin").post(f"/console/acme/members/ghost/{action}", {"roles": ""}).status_code == 404


@pytest.mark.parametrize(
    ("path", "data"),
    [("add", {"username": "x"}), ("reader/update", {"roles": "case_writer"}), ("reader/remove", {})],
)
def test_members_cannot_change_members(signed_in, acme, path, data):
    assert signed_in("writer").post(f"/console/acme/members/{path}", data).status_code == 404
    assert roles_of(acme, "reader") == (["case_reader"], False)
    assert roles_of(acme, "x") is None


@pytest.mark.parametrize(
    ("path", "data"),
    [("add", {"username": "x"}), ("reader/update", {"roles": "case_writer"}), ("reader/remove", {})],
)
def test_member_changes_without_the_csrf_token_are_refused(signed_in, acme, path, data):
    assert signed_in("admin", csrf=True).post(f"/console/acme/members/{path}", data).status_code == 403
    assert roles_of(acme, "reader") == (["case_reader"], False)
