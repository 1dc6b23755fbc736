import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tenants.models import ApiToken, Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(make_tenant, make_member):
    tenant = make_tenant("acme")
    make_member(tenant, "admin", admin=True)
    make_member(tenant, "alice", roles=["case_reader"])
    return tenant


def bearer(client, make_token, tenant, username, **kwargs):
    _, raw = make_token(tenant, username, **kwargs)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


SETTINGS_URL = "/api/tenants/acme/settings"


def test_unauthenticated_callers_get_401(api_client, acme):
    response = api_client.get(SETTINGS_URL)
    assert response.status_code == 401
    assert "Bearer" in response["WWW-Authenticate"]


def test_a_bad_token_gets_401(api_client, acme):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer lcp_nope_nope")
    assert api_client.get(SETTINGS_URL).status_code == 401


def test_members_who_are_not_admins_get_403(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "alice")
    assert api_client.get(SETTINGS_URL).status_code == 403
    assert api_client.get("/api/tenants/acme/members").status_code == 403
    assert api_client.get("/api/tenants/acme/tokens").status_code == 403


def test_a_token_of_another_tenant_gets_403(api_client, acme, make_tenant, make_member, make_token):
    other = make_tenant("other")
    make_member(other, "admin", admin=True)
    bearer(api_client, make_token, other, "admin")
    assert api_client.get(SETTINGS_URL).status_code == 403


def test_unknown_tenants_look_forbidden_to_non_superusers(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin")
    assert api_client.get("/api/tenants/ghost/settings").status_code == 403


def test_superusers_see_unknown_tenants_as_404(api_client, acme):
    root = get_user_model().objects.create_superuser("root", password="x")
    api_client.force_authenticate(root)
    assert api_client.get("/api/tenants/ghost/settings").status_code == 404
    assert api_client.get(SETTINGS_URL).status_code == 200


def test_admin_reads_and_patches_settings(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin")
    defaults = {
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
    assert api_client.get(SETTINGS_URL).json() == defaults
    response = api_client.patch(SETTINGS_URL, {"mcpServer": False, "maxOutputTokens": 500}, format="json")
    assert response.status_code == 200
    assert response.json() == {**defaults, "mcpServer": False, "maxOutputTokens": 500}


@pytest.mark.parametrize("value", ["no", "on", "yes", "true", "false", 0, 1])
def test_settings_take_only_json_booleans_as_the_command_does(api_client, acme, make_token, value):
    bearer(api_client, make_token, acme, "admin")
    response = api_client.patch(SETTINGS_URL, {"customAppsMcpTools": True, "mcpServer": value}, format="json")
    assert response.status_code == 400
    assert "use true or false" in str(response.json())
    acme.refresh_from_db()
    assert acme.settings == {}


@pytest.mark.parametrize("value", [True, "5000", 5000.0, 99, 1_000_001, None])
def test_integer_settings_take_only_json_integers_in_range(api_client, acme, make_token, value):
    bearer(api_client, make_token, acme, "admin")
    response = api_client.patch(SETTINGS_URL, {"maxOutputTokens": value}, format="json")
    assert response.status_code == 400
    acme.refresh_from_db()
    assert acme.settings == {}


def test_patching_an_unknown_setting_is_refused_and_changes_nothing(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin")
    response = api_client.patch(SETTINGS_URL, {"mcpServer": False, "bogus": True}, format="json")
    assert response.status_code == 400
    assert "bogus" in response.json()["errors"]
    acme.refresh_from_db()
    assert acme.settings == {}


def test_a_read_only_admin_token_cannot_write(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin", read_only=True)
    assert api_client.get(SETTINGS_URL).status_code == 200
    assert api_client.patch(SETTINGS_URL, {"mcpServer": False}, format="json").status_code == 403


def test_admin_manages_members(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin")
    created = api_client.post(
        "/api/tenants/acme/members", {"username": "carol", "roles": ["case_writer"]}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["roles"] == ["case_writer"]
    names = [m["username"] for m in api_client.get("/api/tenants/acme/members").json()]
    assert names == ["admin", "alice", "carol"]
    patched = api_client.patch("/api/tenants/acme/members/carol", {"roles": ["x"]}, format="json")
    assert patched.json()["roles"] == ["x"]
    assert (
        api_client.post(
            "/api/tenants/acme/members", {"username": "dan", "roles": ["Bad Role"]}, format="json"
        ).status_code
        == 400
    )
    assert api_client.delete("/api/tenants/acme/members/carol").status_code == 204
    assert api_client.get("/api/tenants/acme/members/carol").status_code == 404
    assert not Membership.objects.for_tenant(acme).filter(user__username="carol").exists()


def test_admin_issues_lists_and_revokes_tokens_without_exposing_hashes(api_client, acme, make_token):
    bearer(api_client, make_token, acme, "admin")
    issued = api_client.post(
        "/api/tenants/acme/tokens", {"username": "alice", "read_only": True}, format="json"
    )
    assert issued.status_code == 201
    raw = issued.json()["token"]
    assert raw.startswith("lcp_")
    listing = api_client.get("/api/tenants/acme/tokens").json()
    assert all("secret_hash" not in row and raw not in str(row) for row in listing)
    token_id = issued.json()["details"]["id"]
    assert api_client.delete(f"/api/tenants/acme/tokens/{token_id}").status_code == 204
    assert ApiToken.objects.for_tenant(acme).get(pk=token_id).revoked_at is not None


def test_tokens_of_other_tenants_are_not_found(api_client, acme, make_tenant, make_member, make_token):
    other = make_tenant("other")
    make_member(other, "bob")
    token, _ = make_token(other, "bob")
    bearer(api_client, make_token, acme, "admin")
    assert api_client.delete(f"/api/tenants/acme/tokens/{token.pk}").status_code == 404


def test_openapi_schema_is_served(api_client):
    response = api_client.get(reverse("api-schema"), HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert "/api/tenants/{slug}/settings" in response.json()["paths"]


def test_healthz_answers_with_the_database_reachable(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["database"] == "ok"
