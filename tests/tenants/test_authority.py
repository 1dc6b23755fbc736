"""Who may do what through the tenant API: a tenant admin manages their tenant and nothing above it."""

import pytest
from django.contrib.auth import get_user_model

from tenants import actions
from tenants.exceptions import NotAllowed
from tenants.models import ApiToken, TenantAuditLog
from tenants.scoping import access_membership, access_user

pytestmark = pytest.mark.django_db

TOKENS = "/api/tenants/acme/tokens"
MEMBERS = "/api/tenants/acme/members"


@pytest.fixture
def acme(make_tenant, make_member):
    tenant = make_tenant("acme")
    make_member(tenant, "admin", admin=True)
    make_member(tenant, "other_admin", admin=True)
    make_member(tenant, "alice", roles=["case_reader"])
    get_user_model().objects.create_superuser("root", password=None)
    get_user_model().objects.create_user("stranger")
    return tenant


@pytest.fixture
def as_admin(api_client, acme, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def works_as_api_token(api_client, raw: str) -> bool:
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client.get("/api/tenants/acme/settings").status_code == 200


def test_a_tenant_admin_cannot_issue_a_token_for_a_superuser_outside_the_tenant(as_admin, acme):
    response = as_admin.post(TOKENS, {"username": "root"}, format="json")
    assert response.status_code == 404
    assert response.json()["code"] == "not_a_member"
    assert not ApiToken.objects.for_tenant(acme).filter(user__username="root").exists()


def test_a_tenant_admin_cannot_issue_a_token_for_a_superuser_who_is_a_member(as_admin, acme):
    actions.add_member(acme, "root", acting_user=None)
    response = as_admin.post(TOKENS, {"username": "root"}, format="json")
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "forbidden" and "superuser" in body["detail"]
    assert not ApiToken.objects.for_tenant(acme).filter(user__username="root").exists()


def test_unknown_users_and_non_members_look_alike_to_a_tenant_admin(as_admin):
    unknown = as_admin.post(TOKENS, {"username": "ghost"}, format="json")
    stranger = as_admin.post(TOKENS, {"username": "stranger"}, format="json")
    assert unknown.status_code == stranger.status_code == 404
    assert unknown.json()["code"] == stranger.json()["code"] == "not_a_member"


def test_a_tenant_admin_issues_working_tokens_for_members_and_other_admins(as_admin, api_client):
    for username in ("alice", "other_admin"):
        response = as_admin.post(TOKENS, {"username": username}, format="json")
        assert response.status_code == 201
    assert works_as_api_token(api_client, response.json()["token"])


def test_a_superuser_issues_a_working_token_for_a_superuser(api_client, acme):
    api_client.force_authenticate(access_user("root"))
    response = api_client.post(TOKENS, {"username": "root"}, format="json")
    assert response.status_code == 201
    api_client.force_authenticate(None)
    assert works_as_api_token(api_client, response.json()["token"])


def test_a_tenant_admin_cannot_make_anyone_a_platform_superuser(as_admin, acme):
    created = as_admin.post(MEMBERS, {"username": "mallory", "superuser": True}, format="json")
    assert created.status_code == 400 and "superuser" in created.json()["errors"]
    patched = as_admin.patch(f"{MEMBERS}/alice", {"is_superuser": True, "roles": []}, format="json")
    assert patched.status_code == 400 and "is_superuser" in patched.json()["errors"]
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert not access_user("alice").is_superuser
    assert access_membership(acme, "alice").roles == ["case_reader"]


def test_fields_the_api_would_ignore_are_refused(as_admin):
    response = as_admin.post(TOKENS, {"username": "alice", "expires_at": "2999-01-01"}, format="json")
    assert response.status_code == 400 and "expires_at" in response.json()["errors"]


def test_the_prefix_cannot_be_changed_through_the_api(as_admin, acme):
    response = as_admin.patch("/api/tenants/acme/settings", {"mcp_prefix": "evil"}, format="json")
    assert response.status_code == 400
    assert "fixed" in response.json()["errors"]["mcp_prefix"][0]
    acme.refresh_from_db()
    assert acme.mcp_prefix == "acme"


@pytest.mark.parametrize("days", [0, -1, 3651, 10**12])
def test_token_lifetimes_out_of_range_are_a_400(as_admin, acme, days):
    response = as_admin.post(TOKENS, {"username": "alice", "expires_days": days}, format="json")
    assert response.status_code == 400 and "expires_days" in response.json()["errors"]
    assert not ApiToken.objects.for_tenant(acme).filter(user__username="alice").exists()


def test_the_longest_token_lifetime_is_ten_years(as_admin):
    response = as_admin.post(TOKENS, {"username": "alice", "expires_days": 3650}, format="json")
    assert response.status_code == 201 and response.json()["details"]["expires_at"]


def test_a_token_id_beyond_the_database_range_is_not_found(as_admin):
    for token_id in (0, 2**63, 10**30):
        assert as_admin.delete(f"{TOKENS}/{token_id}").status_code == 404


def test_more_roles_than_the_limit_are_a_400(as_admin, acme):
    roles = [f"r{i}" for i in range(actions.MAX_ROLES + 1)]
    assert as_admin.post(MEMBERS, {"username": "carol", "roles": roles}, format="json").status_code == 400
    assert as_admin.patch(f"{MEMBERS}/alice", {"roles": roles}, format="json").status_code == 400
    assert access_membership(acme, "alice").roles == ["case_reader"]


# --- the same rules hold for any edge that calls the actions (a console, the admin) ------------


def test_the_token_rule_lives_in_the_action(acme):
    admin = access_user("admin")
    actions.add_member(acme, "root", acting_user=None)
    with pytest.raises(NotAllowed):
        actions.issue_token(acme, "root", acting_user=admin)
    with pytest.raises(NotAllowed):
        actions.add_member(acme, "mallory", superuser=True, acting_user=admin)
    token, _ = actions.issue_token(acme, "root", acting_user=access_user("root"))
    assert token.user.username == "root"


def test_members_who_are_not_admins_change_nothing_through_the_actions(acme):
    alice = access_user("alice")
    for change in (
        lambda: actions.set_tenant_setting(acme, "mcpServer", False, acting_user=alice),
        lambda: actions.add_member(acme, "carol", acting_user=alice),
        lambda: actions.update_member(acme, "alice", roles=["boss"], acting_user=alice),
        lambda: actions.remove_member(acme, "admin", acting_user=alice),
        lambda: actions.issue_token(acme, "alice", acting_user=alice),
        lambda: actions.create_tenant("mine", acting_user=alice),
    ):
        with pytest.raises(NotAllowed):
            change()
    assert not TenantAuditLog.objects.for_tenant(acme).filter(acting_user=alice).exists()
