"""Protected-resource metadata and the 401: Host and tenant are checked before anything is answered."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from tenants import actions


def metadata_url(mcp_url, slug: str = "acme") -> str:
    return mcp_url(slug).replace("/t/", "/.well-known/oauth-protected-resource/t/")


def get(url: str, headers: dict | None = None) -> httpx2.Response:
    async def main():
        async with httpx2.AsyncClient() as http:
            return await http.get(url, headers=headers or {})

    return anyio.run(main)


def post(url: str, headers: dict | None = None) -> httpx2.Response:
    async def main():
        async with httpx2.AsyncClient() as http:
            return await http.post(
                url,
                headers={"Accept": "application/json, text/event-stream", **(headers or {})},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )

    return anyio.run(main)


def test_metadata_names_the_endpoint_at_an_allowed_host(mcp_url, acme, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    response = get(metadata_url(mcp_url), {"Host": "localhost:8000"})
    assert response.status_code == 200
    assert response.json()["resource"] == "http://localhost:8000/t/acme/mcp"


@pytest.mark.parametrize(("host", "status"), [("evil.example", 421), ('evil.example"x', 400)])
def test_a_foreign_host_is_refused_before_metadata_or_the_401_reflect_it(mcp_url, acme, host, status):
    for response in (get(metadata_url(mcp_url), {"Host": host}), post(mcp_url(), {"Host": host})):
        assert response.status_code == status
        assert "evil" not in response.text
        assert "evil" not in response.headers.get("www-authenticate", "")


def test_a_foreign_origin_is_refused_before_the_token_is_checked(mcp_url, acme):
    response = post(mcp_url(), {"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert "www-authenticate" not in response.headers


def test_metadata_of_an_unknown_tenant_is_not_found_as_its_endpoint_is(mcp_url, acme):
    assert get(metadata_url(mcp_url, "nobody")).status_code == 404
    assert post(mcp_url("nobody")).status_code == 404


def test_metadata_of_a_switched_off_endpoint_is_not_found_as_the_endpoint_is(mcp_url, acme):
    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=None)
    assert get(metadata_url(mcp_url)).status_code == 404
    assert post(mcp_url()).status_code == 404


def test_the_401_points_at_the_metadata_of_the_endpoint_asked_for(mcp_url, acme, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    response = post(mcp_url(), {"Host": "localhost:8000"})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert (
        'resource_metadata="http://localhost:8000/.well-known/oauth-protected-resource/t/acme/mcp"'
        in challenge
    )


def test_a_configured_public_base_url_names_the_endpoint_whatever_the_host(mcp_url, acme, settings):
    settings.PUBLIC_BASE_URL = "https://mcp.example"
    response = get(metadata_url(mcp_url), {"Host": "localhost:8000"})
    assert response.json()["resource"] == "https://mcp.example/t/acme/mcp"
    challenge = post(mcp_url(), {"Host": "localhost:8000"}).headers["www-authenticate"]
    assert (
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/t/acme/mcp"' in challenge
    )
