"""Tokens (the secret shown once; revoke) and OAuth connections, for admins and for members."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model

from oauth.models import Connection
from tenants.models import ApiToken
from tenants.tokens import verify_token

pytestmark = pytest.mark.django_db


def test_issuing_a_token_shows_its_secret_once_and_uncached(signed_in, acme):
    client = signed_in("admin")
    response = client.post(
        "/console/acme/tokens/issue", {"username": "reader", "name": "laptop", "read_only": "on"}
    )
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    body = response.content.decode()
    start = body.index('id="issued-secret" readonly value="') + len('id="issued-secret" readonly value="')
    secret = body[start : body.index('"', start)]
    token = verify_token(secret)
    assert (token.user.username, token.name, token.read_only) == ("reader", "laptop", True)
    assert secret not in client.get("/console/acme/tokens/").content.decode()


def test_a_tenant_admin_cannot_issue_a_superusers_token(signed_in, acme):
    response = signed_in("admin").post("/console/acme/tokens/issue", {"username": "root"})
    assert response.status_code == 400
    assert "platform superusers" in response.content.decode()
    assert not ApiToken.objects.for_tenant(acme).exists()


@pytest.mark.parametrize("data", [{"username": "ghost"}, {"username": "reader", "expires_days": "0"}])
def test_bad_token_requests_are_form_errors(signed_in, acme, data):
    assert signed_in("admin").post("/console/acme/tokens/issue", data).status_code == 400
    assert not ApiToken.objects.for_tenant(acme).exists()


def test_revoking_a_token(signed_in, acme, make_token):
    token, _ = make_token(acme, "reader")
    response = signed_in("admin").post(f"/console/acme/tokens/{token.pk}/revoke")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_revoking_another_tenants_token_is_404(signed_in, acme, make_tenant, make_member, make_token):
    other = make_tenant("other")
    make_member(other, "someone")
    token, _ = make_token(other, "someone")
    assert signed_in("admin").post(f"/console/acme/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_members_see_only_their_own_tokens_and_no_forms(signed_in, acme, make_token):
    mine, _ = make_token(acme, "reader", name="mine")
    theirs, _ = make_token(acme, "writer", name="theirs")
    body = signed_in("reader").get("/console/acme/tokens/").content.decode()
    assert f'id="token-{mine.pk}"' in body and f'id="token-{theirs.pk}"' not in body
    assert "Issue a token" not in body and "Revoke" not in body


def test_members_cannot_issue_or_revoke(signed_in, acme, make_token):
    token, _ = make_token(acme, "reader")
    client = signed_in("reader")
    assert client.post("/console/acme/tokens/issue", {"username": "reader"}).status_code == 404
    assert client.post(f"/console/acme/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None and ApiToken.objects.for_tenant(acme).count() == 1


def test_token_changes_without_the_csrf_token_are_refused(signed_in, acme, make_token):
    token, _ = make_token(acme, "reader")
    client = signed_in("admin", csrf=True)
    assert client.post("/console/acme/tokens/issue", {"username": "reader"}).status_code == 403
    assert client.post(f"/console/acme/tokens/{token.pk}/revoke").status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None and ApiToken.objects.for_tenant(acme).count() == 1


@pytest.fixture
def connection_of(acme):
    def make(username: str) -> Connection:
        user = get_user_model().objects.get(username=username)
        app = get_application_model().objects.create(
            name=f"client of {username}",
            client_type="public",
            authorization_grant_type="authorization-code",
            redirect_uris="http://127.0.0.1/cb",
            user=None,
        )
        return Connection.objects.create(tenant=acme, user=user, application=app)

    return make


def test_members_see_and_revoke_their_own_connections(signed_in, acme, connection_of):
    mine, theirs = connection_of("reader"), connection_of("writer")
    client = signed_in("reader")
    body = client.get("/console/acme/connections/").content.decode()
    assert f'id="connection-{mine.pk}"' in body and f'id="connection-{theirs.pk}"' not in body
    assert client.post(f"/console/acme/connections/{theirs.pk}/revoke").status_code == 404
    assert client.post(f"/console/acme/connections/{mine.pk}/revoke").status_code == 302
    mine.refresh_from_db(), theirs.refresh_from_db()
    assert mine.revoked_at is not None and theirs.revoked_at is None


def test_admins_see_and_revoke_every_connection(signed_in, acme, connection_of):
    theirs = connection_of("writer")
    client = signed_in("admin")
    assert f'id="connection-{theirs.pk}"' in client.get("/console/acme/connections/").content.decode()
    assert client.post(f"/console/acme/connections/{theirs.pk}/revoke").status_code == 302
    theirs.refresh_from_db()
    assert theirs.revoked_at is not None


def test_revoking_a_connection_without_the_csrf_token_is_refused(signed_in, acme, connection_of):
    mine = connection_of("reader")
    assert (
        signed_in("reader", csrf=True).post(f"/console/acme/connections/{mine.pk}/revoke").status_code == 403
    )
    mine.refresh_from_db()
    assert mine.revoked_at is None


def test_revoke_buttons_of_tokens_with_one_name_say_whose_and_which(signed_in, acme, make_token):
    first, _ = make_token(acme, "reader", name="demo")
    second, _ = make_token(acme, "writer", name="demo")
    body = signed_in("admin").get("/console/acme/tokens/").content.decode()
    assert f"Revoke demo of reader ({first.key_id})" in body
    assert f"Revoke demo of writer ({second.key_id})" in body


def test_issuing_a_token_narrowed_to_apps_and_seeing_them(signed_in, acme):
    client = signed_in("admin")

    issued = client.post("/console/acme/tokens/issue", {"username": "reader", "apps": "cases, billing"})

    assert issued.status_code == 201
    assert ApiToken.objects.for_tenant(acme).get().apps == ["billing", "cases"]
    assert "billing, cases" in client.get("/console/acme/tokens/").content.decode()


def test_a_member_narrows_their_connection_but_cannot_widen_it(signed_in, acme, connection_of):
    connection = connection_of("reader")
    client = signed_in("reader")
    url = f"/console/acme/connections/{connection.pk}/narrow"

    client.post(url, {"scopes": "app:cases app:billing:read"})
    connection.refresh_from_db()
    assert connection.apps == ["app:billing:read", "app:cases"]
    assert "app:billing:read, app:cases" in client.get("/console/acme/connections/").content.decode()

    client.post(url, {"scopes": "app:cases:read"})  # narrower: the app read-only
    connection.refresh_from_db()
    assert connection.apps == ["app:cases:read"]
    widened = client.post(url, {"scopes": "app:cases app:billing"}, follow=True)
    connection.refresh_from_db()
    assert connection.apps == ["app:cases:read"] and "connect again" in widened.content.decode()
    assert signed_in("writer").post(url, {"scopes": "app:cases:read"}).status_code == 404
