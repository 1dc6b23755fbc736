"""The gateway's bearer auth through the SDK's seams (``mcp_gateway/transport/auth.py``): the 401's
body, description and challenge, what counts as a missing token, and the metadata as the SDK's
model. Pins the parts of the contract an SDK upgrade could change (e.g. RequireAuthMiddleware's
own error rendering).
"""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp.shared.auth import ProtectedResourceMetadata

from mcp_gateway.transport.auth import TOKEN_INVALID, TOKEN_REQUIRED
from tests.support.mcp_wire import legacy_initialize

INITIALIZE = legacy_initialize()


def post(url: str, authorization: str | None, message: dict | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Host": "localhost:8000"}
    if authorization is not None:
        headers["Authorization"] = authorization

    async def main():
        async with httpx2.AsyncClient() as http:
            body = message or {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            return await http.post(url, headers=headers, json=body)

    return anyio.run(main)


def challenge(message: str) -> str:
    metadata = "http://localhost:8000/.well-known/oauth-protected-resource/t/acme/mcp"
    return f'Bearer error="invalid_token", error_description="{message}", resource_metadata="{metadata}"'


@pytest.mark.parametrize("authorization", [None, "Bearer", "Basic cmVhZGVyOnB3", "Token abc"])
def test_no_bearer_token_is_a_401_saying_one_is_required(mcp_url, acme, authorization, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    response = post(mcp_url(), authorization)

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": TOKEN_REQUIRED}
    assert response.headers["www-authenticate"] == challenge(TOKEN_REQUIRED)


@pytest.mark.parametrize("raw", ["nonsense", "lcp_abc.def", "lcpo_not-issued"])
def test_a_bad_token_is_a_401_saying_it_is_invalid(mcp_url, acme, raw, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    response = post(mcp_url(), f"Bearer {raw}")

    assert response.status_code == 401
    assert response.json() == {"error": TOKEN_INVALID}
    assert response.headers["www-authenticate"] == challenge(TOKEN_INVALID)


def test_an_unknown_tenant_is_a_404_whatever_the_token(mcp_url, acme, make_token):
    _, raw = make_token(acme, "reader")

    for authorization in (None, "Bearer nonsense", f"Bearer {raw}"):
        response = post(mcp_url("nobody"), authorization)
        assert response.status_code == 404
        assert "www-authenticate" not in response.headers


def test_the_scheme_is_case_insensitive_and_spaces_before_the_token_do_not_count(mcp_url, acme, make_token):
    _, raw = make_token(acme, "reader")

    for authorization in (f"bearer {raw}", f"BEARER   {raw}"):
        response = post(mcp_url(), authorization, INITIALIZE)
        assert response.status_code == 200, response.text


def test_the_metadata_is_the_sdks_protected_resource_metadata(mcp_url, acme, settings):
    settings.PUBLIC_BASE_URL = "https://mcp.example"
    url = mcp_url().replace("/t/", "/.well-known/oauth-protected-resource/t/")

    body = httpx2.get(url).json()

    metadata = ProtectedResourceMetadata.model_validate(body)
    assert str(metadata.resource) == "https://mcp.example/t/acme/mcp"
    assert body["authorization_servers"] == ["https://mcp.example"]
    assert body["scopes_supported"] == ["mcp"] and body["bearer_methods_supported"] == ["header"]
