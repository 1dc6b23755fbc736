"""Dynamic client registration (RFC 7591) under the platform's client policy."""

import pytest
from oauth2_provider.models import Application

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


@pytest.mark.django_db
def test_a_registration_document_with_hundreds_of_long_redirect_uris_is_refused(client):
    """Issue 26 item 4: 400 redirect URIs of 2 KB each were accepted (810 KB stored)."""
    long_uri = "https://client.example/" + "a" * 2048
    too_long = _register(client, redirect_uris=[long_uri])
    assert too_long.status_code == 400 and "over the 2000 allowed" in too_long.json()["error_description"]
    many = _register(client, redirect_uris=[f"https://client.example/cb{n}" for n in range(11)])
    assert many.status_code == 400 and "11 given, at most 10" in many.json()["error_description"]
    huge = _register(client, redirect_uris=[long_uri] * 400)
    assert huge.status_code == 400
    assert "over the 16384 allowed" in huge.json()["error_description"]
    assert len(huge.content) < 300  # the refusal does not echo the document
    assert not Application.objects.exists()


@pytest.mark.django_db
def test_registrations_from_one_address_are_limited_per_hour(client, settings):
    settings.OAUTH_REGISTRATIONS_PER_HOUR = 3
    assert [_register(client).status_code for _ in range(3)] == [201] * 3
    refused = _register(client)
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_requests"
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert Application.objects.count() == 3
    other = client.post(
        "/oauth/register/",
        {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        content_type="application/json",
        REMOTE_ADDR="198.51.100.7",
    )
    assert other.status_code == 201  # another address is counted apart


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("application_type", "uri", "status"),
    [
        ("web", "https://claude.ai/api/mcp/auth_callback", 201),
        ("native", "http://127.0.0.1:33418/", 201),
        ("native", "https://app.example/cb", 201),
        ("web", "http://127.0.0.1:33418/", 400),
        ("browser", "https://app.example/cb", 400),
    ],
)
def test_the_application_type_is_checked_against_the_redirect_uris_and_echoed(
    client, application_type, uri, status
):
    response = _register(client, redirect_uris=[uri], application_type=application_type)

    assert response.status_code == status, response.content
    if status == 201:
        assert response.json()["application_type"] == application_type
    else:
        assert response.json()["error"] == "invalid_client_metadata"
