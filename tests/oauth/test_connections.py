"""Connections: members see and revoke their own, tenant admins all of the tenant's; admin too."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from oauth.models import Connection
from tenants.models import TenantAuditLog
from tests.oauth.flow import connect, refresh


def _api(make_token, tenant, username: str, **kw) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(tenant, username, **kw)[1]}")
    return api


def test_a_member_lists_only_their_own_connections_and_an_admin_all(acme, make_token):
    connect(Client(), "reader")
    connect(Client(), "writer")
    mine = _api(make_token, acme, "reader").get("/api/tenants/acme/connections").json()
    everyone = _api(make_token, acme, "admin").get("/api/tenants/acme/connections").json()
    assert [row["username"] for row in mine] == ["reader"]
    assert sorted(row["username"] for row in everyone) == ["reader", "writer"]
    assert mine[0]["client_registration"] == "dcr" and mine[0]["active"] is True


def test_a_member_revokes_their_connection_and_its_tokens_end_at_once(acme, make_token):
    connected = connect(Client(), "reader")
    connection = Connection.all_tenants.get()
    response = _api(make_token, acme, "reader").delete(f"/api/tenants/acme/connections/{connection.pk}")
    assert response.status_code == 204
    connection.refresh_from_db()
    assert connection.revoked_at is not None
    assert refresh(Client(), connected.client_id, connected.refresh_token).status_code == 400
    assert TenantAuditLog.objects.for_tenant(acme).filter(action="oauth.connection.revoke").exists()


def test_a_member_cannot_see_or_revoke_someone_elses_connection(acme, make_token):
    connect(Client(), "writer")
    connection = Connection.all_tenants.get()
    api = _api(make_token, acme, "reader")
    assert api.get(f"/api/tenants/acme/connections/{connection.pk}").status_code == 404
    assert api.delete(f"/api/tenants/acme/connections/{connection.pk}").status_code == 404
    assert Connection.all_tenants.get().is_active


def test_a_tenant_admin_revokes_any_connection_of_the_tenant(acme, make_token):
    connect(Client(), "writer")
    connection = Connection.all_tenants.get()
    assert (
        _api(make_token, acme, "admin").delete(f"/api/tenants/acme/connections/{connection.pk}").status_code
        == 204
    )


def test_outsiders_and_read_only_tokens_cannot_revoke(acme, make_tenant, make_member, make_token):
    other = make_tenant("other")
    make_member(other, "outsider")
    connect(Client(), "reader")
    connection = Connection.all_tenants.get()
    outsider = _api(make_token, other, "outsider")
    assert outsider.get("/api/tenants/acme/connections").status_code == 403
    read_only = _api(make_token, acme, "reader", read_only=True)
    assert read_only.get("/api/tenants/acme/connections").status_code == 200
    assert read_only.delete(f"/api/tenants/acme/connections/{connection.pk}").status_code == 403


def test_the_admin_lists_connections_and_revokes_them(acme):
    admin_client = Client()
    admin_client.force_login(get_user_model().objects.get(username="root"))
    connect(Client(), "reader")
    connection = Connection.all_tenants.get()
    assert admin_client.get("/admin/oauth/connection/").status_code == 200
    response = admin_client.post(
        "/admin/oauth/connection/", {"action": "revoke", "_selected_action": [connection.pk]}
    )
    assert response.status_code == 302
    connection.refresh_from_db()
    assert connection.revoked_at is not None


def test_set_password_reads_one_line_from_standard_input(acme):
    out = StringIO()
    call_command("set_password", "reader", stdin=StringIO("a new password\nignored\n"), stdout=out)
    assert get_user_model().objects.get(username="reader").check_password("a new password")
    assert "reader" in out.getvalue()


@pytest.mark.parametrize(
    ("username", "line"), [("nobody", "long enough pw\n"), ("reader", "\n"), ("reader", "short\n")]
)
def test_set_password_refuses_unknown_users_and_empty_or_weak_passwords(acme, username, line):
    with pytest.raises(CommandError):
        call_command("set_password", username, stdin=StringIO(line), stdout=StringIO())


def test_set_password_reads_the_process_standard_input_by_default(acme, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdin", StringIO("from the pipe\n"))
    call_command("set_password", "writer", stdout=StringIO())
    assert get_user_model().objects.get(username="writer").check_password("from the pipe")
