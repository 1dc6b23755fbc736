"""RFC 8414 metadata of the platform's authorization server."""

import pytest


def test_authorization_server_metadata_names_the_platform_origin_and_pkce_s256_only(client, public_origin):
    body = client.get("/.well-known/oauth-authorization-server").json()
    assert body["issuer"] == public_origin
    assert body["authorization_endpoint"] == f"{public_origin}/oauth/authorize/"
    assert body["token_endpoint"] == f"{public_origin}/oauth/token/"
    assert body["registration_endpoint"] == f"{public_origin}/oauth/register/"
    assert body["revocation_endpoint"] == f"{public_origin}/oauth/revoke/"
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["client_id_metadata_document_supported"] is True
    assert body["scopes_supported"] == ["mcp"]
    assert body["response_types_supported"] == ["code"]
    assert body["grant_types_supported"] == ["authorization_code", "refresh_token"]


def test_the_openid_style_path_serves_the_same_metadata(client):
    oauth = client.get("/.well-known/oauth-authorization-server").json()
    assert client.get("/.well-known/openid-configuration").json() == oauth


def test_without_public_base_url_outside_debug_the_metadata_is_unavailable(client, settings):
    settings.PUBLIC_BASE_URL = ""
    settings.DEBUG = False
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 503


@pytest.mark.parametrize("debug", [True])
def test_in_debug_without_public_base_url_the_issuer_is_the_request_origin(client, settings, debug):
    settings.PUBLIC_BASE_URL = ""
    settings.DEBUG = debug
    body = client.get("/.well-known/oauth-authorization-server", HTTP_HOST="localhost:8000").json()
    assert body["issuer"] == "http://localhost:8000"
