"""OAuth connections narrowed to apps: the consent page offers the member's apps (use, read-only,
not this app), the grant's scopes name them (``app:<name>``, ``app:<name>:read``), the
protected-resource metadata advertises them, and a client that asks again for a wider scope gets it
once the person consents."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from django.test import Client

from oauth.models import Connection
from tests.mcp_gateway.conftest import all_tool_names, mcp_client
from tests.mcp_gateway.test_confirmation import FILES as LEDGER_FILES
from tests.mcp_gateway.test_confirmation import MANIFEST as LEDGER
from tests.oauth.flow import _user, authorize_query, exchange, hidden_fields, pkce_pair, register
from tests.support import mcp_wire as wire


@pytest.fixture
def live(mcp_url, acme, deploy, settings):
    deploy(acme)
    deploy(acme, LEDGER, LEDGER_FILES)
    settings.PUBLIC_BASE_URL = mcp_url().split("/t/")[0]
    return settings.PUBLIC_BASE_URL


def consent_and_connect(username: str, choices: dict[str, str], scope: str = "mcp") -> tuple[str, str]:
    """Consent as ``username`` with ``choices`` (app -> full|read|none; unnamed apps as preselected);
    the consent page's HTML and the access token."""
    api, browser = Client(), Client()
    client_id = register(api)["client_id"]
    browser.force_login(_user(username))
    verifier, challenge = pkce_pair()
    page = browser.get("/oauth/authorize/", authorize_query(client_id, challenge, scope=scope))
    assert page.status_code == 200, page.content
    html = page.content.decode()
    form = {**hidden_fields(html), "allow": "on", **{f"app_{app}": c for app, c in choices.items()}}
    answer = browser.post("/oauth/authorize/", form)
    assert answer.status_code == 302, answer.content
    code = parse_qs(urlsplit(answer["Location"]).query)["code"][0]
    token = exchange(api, client_id, code, verifier)
    assert token.status_code == 200, token.content
    return html, token.json()["access_token"]


def tool_names(url: str, token: str) -> list[str]:
    async def main():
        async with mcp_client(url, token) as client:
            return await all_tool_names(client)

    return anyio.run(main)


def test_the_metadata_advertises_the_app_scopes(mcp_url, live):
    url = f"{live}/.well-known/oauth-protected-resource/t/acme/mcp"
    scopes = httpx2.get(url, timeout=30).json()["scopes_supported"]
    assert scopes == ["mcp", "app:cases", "app:cases:read", "app:ledger", "app:ledger:read"]


def test_the_consent_page_offers_each_app_with_a_read_only_choice(mcp_url, live):
    html, _ = consent_and_connect("writer", {})
    for app in ("cases", "ledger"):
        for choice in ("full", "read", "none"):
            assert f'name="app_{app}" value="{choice}"' in html


def test_a_connection_narrowed_on_the_consent_page_sees_only_its_apps(mcp_url, live):
    _, token = consent_and_connect("writer", {"cases": "none", "ledger": "full"})

    names = tool_names(mcp_url(), token)
    assert "acme_ledger_peek" in names and not [n for n in names if n.startswith("acme_cases_")]
    assert Connection.all_tenants.get().apps == ["app:ledger"]
    message = wire.request("tools/call", {"name": "acme_cases_echo", "arguments": {"thing": "x"}})
    headers = {**wire.modern_headers(token, message), "Accept": "application/json"}
    refused = httpx2.post(mcp_url(), content=wire.encode(message), headers=headers, timeout=30)
    assert refused.status_code == 403
    assert refused.headers["www-authenticate"] == 'Bearer error="insufficient_scope", scope="app:cases"'


def test_read_only_on_the_consent_page_carries_the_apps_read_tools(mcp_url, live):
    _, token = consent_and_connect("writer", {"cases": "read", "ledger": "none"})

    names = tool_names(mcp_url(), token)
    assert "acme_cases_find_case" in names and "acme_cases_echo" not in names
    assert not [n for n in names if n.startswith("acme_ledger_")]


def test_a_client_asking_again_for_the_wider_scope_gets_it_after_consent(mcp_url, live):
    _, narrow = consent_and_connect("writer", {"cases": "none"})
    assert "acme_cases_echo" not in tool_names(mcp_url(), narrow)

    html, wider = consent_and_connect("writer", {}, scope="mcp app:cases app:ledger")  # the step-up's ask

    assert 'value="full" checked' in html.split('name="app_cases"')[0] + html.split('name="app_cases"')[1]
    assert "acme_cases_echo" in tool_names(mcp_url(), wider)
