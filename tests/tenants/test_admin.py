"""The Django admin: settings visible and editable, tokens created with the secret shown once."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages

from tenants.models import ApiToken
from tenants.tokens import verify_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(get_user_model().objects.create_superuser("boss", password="pw-123456"))
    return client


def test_the_tenant_list_shows_both_settings(admin_client, make_tenant):
    make_tenant("acme")
    page = admin_client.get("/admin/tenants/tenant/").content.decode()
    assert "customAppsMcpTools" in page and "mcpServer" in page


def test_settings_are_edited_in_the_tenant_form(admin_client, make_tenant):
    tenant = make_tenant("acme")
    response = admin_client.post(
        f"/admin/tenants/tenant/{tenant.pk}/change/",
        {"slug": "acme", "name": "Acme", "mcp_prefix": "acme", "setting_mcpServer": "on"},
    )
    assert response.status_code == 302
    tenant.refresh_from_db()
    assert tenant.get_settings() == {"customAppsMcpTools": False, "mcpServer": True}


def test_a_token_made_in_the_admin_shows_its_secret_once(admin_client, make_tenant, make_member):
    tenant = make_tenant("acme")
    member = make_member(tenant, "alice")
    form = {"tenant": tenant.pk, "user": member.user.pk, "name": "ci"}
    response = admin_client.post("/admin/tenants/apitoken/add/", form, follow=True)
    shown = [str(m) for m in get_messages(response.wsgi_request) if "lcp_" in str(m)]
    assert len(shown) == 1
    raw = shown[0].rsplit(" ", 1)[-1]
    assert verify_token(raw).name == "ci"
    token = ApiToken.objects.for_tenant(tenant).get()
    detail = admin_client.get(f"/admin/tenants/apitoken/{token.pk}/change/").content.decode()
    assert token.secret_hash not in detail and raw not in detail


def test_the_admin_refuses_tokens_for_non_members(admin_client, make_tenant):
    tenant = make_tenant("acme")
    outsider = get_user_model().objects.create_user("outsider")
    response = admin_client.post("/admin/tenants/apitoken/add/", {"tenant": tenant.pk, "user": outsider.pk})
    assert response.status_code == 200 and "not a member" in response.content.decode()
    assert not ApiToken.objects.for_tenant(tenant).exists()


def test_revoking_from_the_admin(admin_client, make_tenant, make_member, make_token):
    tenant = make_tenant("acme")
    make_member(tenant, "alice")
    token, _ = make_token(tenant, "alice")
    admin_client.post("/admin/tenants/apitoken/", {"action": "revoke", "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert token.revoked_at is not None
