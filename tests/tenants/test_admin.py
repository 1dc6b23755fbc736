"""The Django admin: settings visible and editable, tokens created with the secret shown once."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages

from tenants.models import ApiToken, Membership, Tenant, TenantAuditLog
from tenants.scoping import access_membership, access_user
from tenants.tokens import verify_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(get_user_model().objects.create_superuser("boss", password=None))
    return client


def test_the_tenant_list_shows_both_settings(admin_client, make_tenant):
    make_tenant("acme")
    page = admin_client.get("/admin/tenants/tenant/").content.decode()
    assert "customAppsMcpTools" in page and "mcpServer" in page


def test_settings_are_edited_in_the_tenant_form(admin_client, make_tenant):
    tenant = make_tenant("acme")
    response = admin_client.post(
        f"/admin/tenants/tenant/{tenant.pk}/change/",
        {
            "name": "Acme",
            "setting_mcpServer": "on",
            "setting_maxOutputTokens": "5000",
            **tenant_form_management(),
        },
    )
    assert response.status_code == 302
    tenant.refresh_from_db()
    assert tenant.get_settings() == {
        "agentRunsPerDay": 100,
        "agentTokensPerDay": 1000000,
        "codeMode": False,  # an unticked box
        "confirmDestructiveTools": False,  # an unticked box
        "customAppsMcpTools": False,
        "maxOutputTokens": 5000,
        "mcpServer": True,
        "toolDiscovery": "list",
        "toolRateLimit": None,
    }


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


# --- every admin write goes through the actions ---------------------------------------------------


def tenant_form(tenant, rows=(), **changes) -> dict:
    """The tenant change form as the admin posts it, with its member rows (the inline)."""
    form = {
        "name": tenant.name,
        # As a browser posts them: checked switches as "on", numbers as typed.
        **{f"setting_{k}": "on" if v is True else str(v) for k, v in tenant.get_settings().items() if v},
        "memberships-TOTAL_FORMS": str(len(rows)),
        "memberships-INITIAL_FORMS": str(sum(1 for row in rows if "id" in row)),
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    for i, row in enumerate(rows):
        form.update({f"memberships-{i}-{key}": value for key, value in row.items() if value is not False})
        form[f"memberships-{i}-tenant"] = tenant.pk
    form.update(changes)
    return form


def member_row(membership, **changes) -> dict:
    row = {
        "id": membership.pk,
        "user": membership.user.pk,
        "roles": ", ".join(membership.roles),
        "is_admin": "on" if membership.is_admin else False,
    }
    return {**row, **changes}


def bearer_status(api_client, raw: str) -> int:
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client.get("/api/tenants/acme/settings").status_code


@pytest.fixture
def acme(make_tenant, make_member):
    tenant = make_tenant("acme")
    make_member(tenant, "alice", roles=["case_reader"], admin=True)
    make_member(tenant, "bob", roles=["case_reader"], admin=True)
    return tenant


def test_deleting_a_membership_in_the_admin_revokes_its_tokens(admin_client, api_client, acme, make_token):
    _, raw = make_token(acme, "alice")
    assert bearer_status(api_client, raw) == 200
    membership = access_membership(acme, "alice")
    response = admin_client.post(f"/admin/tenants/membership/{membership.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert bearer_status(api_client, raw) == 401
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="member.remove", target="alice").exists()


def test_deleting_memberships_in_bulk_revokes_their_tokens(admin_client, api_client, acme, make_token):
    _, raw = make_token(acme, "bob")
    membership = access_membership(acme, "bob")
    admin_client.post(
        "/admin/tenants/membership/",
        {"action": "delete_selected", "_selected_action": [membership.pk], "post": "yes"},
    )
    assert not Membership.objects.for_tenant(acme).filter(user__username="bob").exists()
    assert bearer_status(api_client, raw) == 401


def test_deleting_a_member_row_on_the_tenant_page_revokes_its_tokens(
    admin_client, api_client, acme, make_token
):
    _, raw = make_token(acme, "alice")
    alice, bob = access_membership(acme, "alice"), access_membership(acme, "bob")
    form = tenant_form(acme, [member_row(alice, DELETE="on"), member_row(bob)])
    response = admin_client.post(f"/admin/tenants/tenant/{acme.pk}/change/", form)
    assert response.status_code == 302
    assert [m.user.username for m in Membership.objects.for_tenant(acme)] == ["bob"]
    assert bearer_status(api_client, raw) == 401


def test_an_invalid_role_in_a_member_row_is_refused(admin_client, acme):
    alice, bob = access_membership(acme, "alice"), access_membership(acme, "bob")
    form = tenant_form(acme, [member_row(alice, roles="case_reader, BadRole"), member_row(bob)])
    response = admin_client.post(f"/admin/tenants/tenant/{acme.pk}/change/", form)
    assert response.status_code == 200 and "BadRole" in response.content.decode()
    assert access_membership(acme, "alice").roles == ["case_reader"]


def test_an_invalid_role_on_the_membership_page_is_a_form_error(admin_client, acme):
    alice = access_membership(acme, "alice")
    for roles, problem in (("BadRole", "BadRole"), ("case_reader, x" + "y" * 40, "role names must match")):
        response = admin_client.post(
            f"/admin/tenants/membership/{alice.pk}/change/",
            {"tenant": acme.pk, "user": alice.user.pk, "roles": roles},
        )
        errors = re.findall(r'<ul class="errorlist.*?</ul>', response.content.decode(), re.S)
        assert response.status_code == 200 and problem in "".join(errors)
    assert access_membership(acme, "alice").roles == ["case_reader"]


def test_a_role_change_in_a_member_row_is_audited_and_bumps_the_state(admin_client, acme):
    alice, bob = access_membership(acme, "alice"), access_membership(acme, "bob")
    before = acme.state_version
    form = tenant_form(acme, [member_row(alice, roles="case_writer, case_writer"), member_row(bob)])
    response = admin_client.post(f"/admin/tenants/tenant/{acme.pk}/change/", form)
    assert response.status_code == 302
    assert access_membership(acme, "alice").roles == ["case_writer"]
    acme.refresh_from_db()
    assert acme.state_version > before
    entry = TenantAuditLog.objects.for_tenant(acme).filter(action="member.set", target="alice").first()
    assert entry.acting_user.username == "boss"
    assert (entry.old_value["roles"], entry.new_value["roles"]) == (["case_reader"], ["case_writer"])


def test_a_role_change_on_the_membership_page_is_audited_and_bumps_the_state(admin_client, acme):
    alice = access_membership(acme, "alice")
    before = acme.state_version
    response = admin_client.post(
        f"/admin/tenants/membership/{alice.pk}/change/",
        {"tenant": acme.pk, "user": alice.user.pk, "roles": "case_writer"},
    )
    assert response.status_code == 302
    assert access_membership(acme, "alice").roles == ["case_writer"]
    assert not access_membership(acme, "alice").is_admin
    acme.refresh_from_db()
    assert acme.state_version > before
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="member.set", target="alice").exists()


def test_a_member_added_on_the_tenant_page_is_audited(admin_client, acme):
    carol = get_user_model().objects.create_user("carol")
    alice, bob = access_membership(acme, "alice"), access_membership(acme, "bob")
    new_row = {"user": carol.pk, "roles": "case_reader"}
    response = admin_client.post(
        f"/admin/tenants/tenant/{acme.pk}/change/",
        tenant_form(acme, [member_row(alice), member_row(bob), new_row]),
    )
    assert response.status_code == 302
    assert access_membership(acme, "carol").roles == ["case_reader"]
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="member.set", target="carol").exists()


def test_a_member_added_on_the_membership_page_is_audited_and_duplicates_refused(admin_client, acme):
    carol = get_user_model().objects.create_user("carol")
    form = {"tenant": acme.pk, "user": carol.pk, "roles": "case_reader", "is_admin": "on"}
    assert admin_client.post("/admin/tenants/membership/add/", form).status_code == 302
    assert access_membership(acme, "carol").is_admin
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="member.set", target="carol").exists()
    again = admin_client.post("/admin/tenants/membership/add/", form)
    assert again.status_code == 200 and "errorlist" in again.content.decode()


def test_the_prefix_and_slug_are_read_only_once_the_tenant_exists(admin_client, acme):
    page = admin_client.get(f"/admin/tenants/tenant/{acme.pk}/change/").content.decode()
    assert 'name="mcp_prefix"' not in page and 'name="slug"' not in page
    response = admin_client.post(
        f"/admin/tenants/tenant/{acme.pk}/change/", tenant_form(acme, mcp_prefix="evil", slug="evil")
    )
    assert response.status_code == 302
    acme.refresh_from_db()
    assert (acme.slug, acme.mcp_prefix) == ("acme", "acme")


def test_a_tenant_made_and_renamed_in_the_admin_is_audited(admin_client):
    add = {"slug": "beta", "name": "Beta", "mcp_prefix": "beta", **tenant_form_management()}
    add.update(
        {
            "setting_mcpServer": "on",
            "setting_customAppsMcpTools": "on",
            "setting_confirmDestructiveTools": "on",
            "setting_codeMode": "on",
        }
    )
    assert admin_client.post("/admin/tenants/tenant/add/", add).status_code == 302
    beta = Tenant.objects.get(slug="beta")
    assert (
        admin_client.post(
            f"/admin/tenants/tenant/{beta.pk}/change/", tenant_form(beta, name="Beta Corp")
        ).status_code
        == 302
    )
    beta.refresh_from_db()
    assert beta.name == "Beta Corp"
    actions_done = list(TenantAuditLog.objects.for_tenant(beta).values_list("action", flat=True))
    assert sorted(actions_done) == ["tenant.create", "tenant.rename"]


def tenant_form_management() -> dict:
    return {
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }


def test_the_admin_does_not_issue_a_token_beyond_ten_years(admin_client, acme):
    form = {"tenant": acme.pk, "user": access_user("alice").pk, "expires_days": "1000000000000"}
    response = admin_client.post("/admin/tenants/apitoken/add/", form)
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert not ApiToken.objects.for_tenant(acme).exists()


def test_platform_rows_cannot_be_edited_or_deleted_in_the_admin(admin_client, acme, make_token):
    token, _ = make_token(acme, "alice")
    entry = TenantAuditLog.objects.for_tenant(acme).first()
    for url in (
        f"/admin/tenants/tenant/{acme.pk}/delete/",
        f"/admin/tenants/apitoken/{token.pk}/delete/",
        f"/admin/tenants/tenantauditlog/{entry.pk}/delete/",
    ):
        assert admin_client.post(url, {"post": "yes"}).status_code == 403, url
    response = admin_client.post(f"/admin/tenants/apitoken/{token.pk}/change/", {"name": "renamed"})
    assert response.status_code == 403
    assert ApiToken.objects.for_tenant(acme).get().name == ""
    assert TenantAuditLog.objects.for_tenant(acme).filter(pk=entry.pk).exists()


def test_staff_who_are_not_superusers_see_no_tenant_pages(client, acme):
    staff = get_user_model().objects.create_user("staff", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(content_type__app_label="tenants"))
    client.force_login(staff)
    assert client.get("/admin/tenants/apitoken/").status_code == 403
    assert client.get("/admin/tenants/apitoken/add/").status_code == 403


def test_roles_are_a_line_of_names_in_the_admin_not_json(admin_client, acme):
    alice = access_membership(acme, "alice")
    page = admin_client.get(f"/admin/tenants/membership/{alice.pk}/change/").content.decode()
    assert 'value="case_reader"' in page and "[&quot;case_reader&quot;]" not in page
    response = admin_client.post(
        f"/admin/tenants/membership/{alice.pk}/change/",
        {"tenant": acme.pk, "user": alice.user.pk, "roles": "case_writer case_reader"},
    )
    assert response.status_code == 302
    assert access_membership(acme, "alice").roles == ["case_reader", "case_writer"]


def test_the_admin_names_apps_and_settings_in_words(admin_client, acme):
    assert "MCP gateway" in admin_client.get("/admin/").content.decode()
    listing = admin_client.get("/admin/tenants/tenant/").content.decode()
    assert "MCP server" in listing and "Custom apps MCP tools" in listing and ">mcpServer<" not in listing
