"""Refresh-token rotation, replay detection and revocation (RFC 7009)."""

from django.test import Client

from oauth.models import Connection
from tenants import actions
from tests.oauth.flow import connect, refresh


def test_a_refresh_rotates_both_tokens(acme):
    connected = connect(Client())
    rotated = refresh(Client(), connected.client_id, connected.refresh_token)
    assert rotated.status_code == 200
    body = rotated.json()
    assert body["refresh_token"] != connected.refresh_token
    assert body["access_token"] != connected.access_token
    assert Connection.all_tenants.get().is_active


def test_replaying_a_rotated_refresh_token_revokes_the_whole_connection(acme):
    connected = connect(Client())
    rotated = refresh(Client(), connected.client_id, connected.refresh_token).json()
    replay = refresh(Client(), connected.client_id, connected.refresh_token)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    connection = Connection.all_tenants.get()
    assert connection.revoked_at is not None and connection.revoked_reason == "refresh token replayed"
    # The legitimate holder's newest tokens are gone too.
    assert refresh(Client(), connected.client_id, rotated["refresh_token"]).status_code == 400


def test_a_refresh_token_only_works_for_its_client(acme):
    connected = connect(Client())
    other = connect(Client())
    response = refresh(Client(), other.client_id, connected.refresh_token)
    assert response.status_code == 400


def test_revoking_the_refresh_token_ends_the_connection(acme):
    connected = connect(Client())
    response = Client().post(
        "/oauth/revoke/",
        {
            "token": connected.refresh_token,
            "token_type_hint": "refresh_token",
            "client_id": connected.client_id,
        },
    )
    assert response.status_code == 200
    assert Connection.all_tenants.get().revoked_reason == "revoked by the client"
    assert refresh(Client(), connected.client_id, connected.refresh_token).status_code == 400


def test_revoking_the_access_token_ends_the_connection(acme):
    connected = connect(Client())
    response = Client().post(
        "/oauth/revoke/", {"token": connected.access_token, "client_id": connected.client_id}
    )
    assert response.status_code == 200
    assert not Connection.all_tenants.get().is_active


def test_removing_a_member_ends_their_connections_even_if_they_are_added_back(acme):
    """Issue 26 item 9: the connection stayed refreshable, and worked again on re-adding, no consent."""
    connected = connect(Client())
    actions.remove_member(acme, "reader", acting_user=None)

    refused = refresh(Client(), connected.client_id, connected.refresh_token)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    connection = Connection.all_tenants.get()
    assert connection.revoked_reason == "member_removed"
    actions.add_member(acme, "reader", roles=["case_reader"], acting_user=None)
    assert refresh(Client(), connected.client_id, connected.refresh_token).status_code == 400
