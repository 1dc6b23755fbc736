"""Dynamic client registration (RFC 7591) under the platform's client policy."""

import pytest

from tests.oauth.flow import REDIRECT_URI


def _register(client, **metadata):
    body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    body.update(metadata)
    return client.post("/oauth/register/", body, content_type="application/json")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "http://127.0.0.1:33418/",
        "http://localhost:6274/oauth/callback",
        "http://[::1]:8080/cb",
    ],
)
def test_https_and_loopback_http_redirect_uris_register(client, uri):
    response = _register(client, redirect_uris=[uri])
    assert response.status_code == 201, response.content
    assert response.json()["redirect_uris"] == [uri]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "uri",
    [
        "http://example.com/callback",
        "http://192.168.1.10/callback",
        "javascript:alert(1)",
        "myapp://callback",
        "https://example.com/cb#fragment",
        "https://user:pw@example.com/cb",
    ],
)
def test_other_redirect_uris_are_refused(client, uri):
    response = _register(client, redirect_uris=[uri])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "metadata",
    [
        {"grant_types": ["client_credentials"]},
        {"grant_types": ["authorization_code", "implicit"]},
        {"grant_types": ["password"]},
        {"response_types": ["token"]},
        {"redirect_uris": []},
        {"token_endpoint_auth_method": "private_key_jwt"},
    ],
)
def test_only_the_authorization_code_flow_registers(client, metadata):
    response = _register(client, **metadata)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


@pytest.mark.django_db
def test_a_confidential_client_gets_a_secret_and_a_public_one_does_not(client):
    confidential = _register(client, token_endpoint_auth_method="client_secret_post").json()
    public = _register(client).json()
    assert confidential["client_secret"]
    assert "client_secret" not in public
    assert public["token_endpoint_auth_method"] == "none"


@pytest.mark.django_db
def test_a_registration_update_meets_the_same_policy(client):
    registered = _register(client).json()
    response = client.put(
        f"/oauth/register/{registered['client_id']}/",
        {"redirect_uris": ["http://evil.example/cb"], "token_endpoint_auth_method": "none"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registered['registration_access_token']}",
    )
    assert response.status_code == 400
