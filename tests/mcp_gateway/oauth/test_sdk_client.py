"""End to end: the official SDK's OAuth client, with no token configured, against a live server.

Discovery (401 -> protected-resource metadata -> authorization-server metadata), registration
(dynamic, or a client ID metadata document served on loopback), a person signing in and consenting
through the real forms, tools/list and tools/call as that person, refresh, revocation. Both eras.
"""

from __future__ import annotations

from io import StringIO

import anyio
import httpx2
import pytest
from django.core.management import call_command

from mcp_gateway.tools.call.calls import visible_tools
from oauth.models import Connection
from tenants.callers import caller_for
from tests.oauth.live import PASSWORD, MemoryStorage, Person, expire_on_the_client, oauth_client, provider
from tests.support.apps import cases_manifest

MODES = ["legacy", "2026-07-28"]


@pytest.fixture
def platform(mcp_url, acme, deploy, settings):
    """acme with the test app, served live; its people have passwords, set as a script would."""
    deploy(acme, cases_manifest())
    settings.PUBLIC_BASE_URL = mcp_url("acme").split("/t/")[0]
    for username in ("reader", "writer", "member"):
        call_command("set_password", username, stdin=StringIO(PASSWORD + "\n"), stdout=StringIO())
    return acme


def _names(tools_page) -> list[str]:
    return [tool.name for tool in tools_page.tools]


def _expected(tenant, username: str, *, read_only: bool = False) -> list[str]:
    from dataclasses import replace

    caller = caller_for(tenant, tenant.memberships.get(user__username=username).user)
    return [entry.wire_name for entry in visible_tools(tenant, replace(caller, read_only=read_only))]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_with_no_token_signs_in_consents_and_calls_tools_as_that_person(mcp_url, platform, mode):
    person, storage = Person("writer"), MemoryStorage()
    auth = provider(mcp_url(), person, storage)

    async def main():
        async with oauth_client(auth, mcp_url(), mode=mode) as client:
            listed = _names(await client.list_tools())
            echoed = await client.call_tool("acme_cases_echo", {"thing": "hi"})
            return listed, echoed

    listed, echoed = anyio.run(main)
    assert person.visits == 1
    assert listed == _expected(platform, "writer")
    assert f"will see {len(listed)} tools" in person.consent_html
    assert echoed.is_error is False
    assert echoed.structured_content["user"]["username"] == "writer"
    assert storage.client_info.client_id and storage.tokens.access_token.startswith("lcpo_")
    connection = Connection.all_tenants.get()
    assert connection.user.username == "writer" and connection.client_id == storage.client_info.client_id


@pytest.mark.parametrize("mode", MODES)
def test_the_client_refreshes_and_a_revoked_connection_ends_at_once(mcp_url, platform, make_token, mode):
    person, storage = Person("reader"), MemoryStorage()
    auth = provider(mcp_url(), person, storage)

    async def main():
        async with oauth_client(auth, mcp_url(), mode=mode) as client:
            await client.list_tools()
            first = storage.tokens
            expire_on_the_client(auth)
            await client.list_tools(cache_mode="refresh")  # a request goes out, so the refresh does
            return first, storage.tokens

    first, second = anyio.run(main)
    assert second.refresh_token != first.refresh_token and second.access_token != first.access_token
    assert person.visits == 1  # refreshed, not sent through sign-in again

    connection = Connection.all_tenants.get()
    api_token = make_token(platform, "reader")[1]
    revoked = httpx2.delete(
        f"{mcp_url().split('/t/')[0]}/api/tenants/acme/connections/{connection.pk}",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert revoked.status_code == 204
    after = httpx2.post(
        mcp_url(),
        headers={
            "Authorization": f"Bearer {second.access_token}",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert after.status_code == 401
    assert "resource_metadata=" in after.headers["www-authenticate"]


def test_a_read_only_consent_lists_only_read_only_tools(mcp_url, platform):
    person, storage = Person("writer", read_only=True), MemoryStorage()

    async def main():
        async with oauth_client(provider(mcp_url(), person, storage), mcp_url(), mode="legacy") as client:
            return _names(await client.list_tools())

    listed = anyio.run(main)
    assert listed == _expected(platform, "writer", read_only=True)
    assert set(listed) < set(_expected(platform, "writer"))


def test_a_client_named_by_a_metadata_document_on_loopback_connects(mcp_url, platform, cimd_server):
    from tests.oauth.flow import REDIRECT_URI

    document = cimd_server.client_document("/sdk/client.json", [REDIRECT_URI])
    person, storage = Person("reader"), MemoryStorage()
    auth = provider(mcp_url(), person, storage, client_metadata_url=document)

    async def main():
        async with oauth_client(auth, mcp_url(), mode="legacy") as client:
            return _names(await client.list_tools())

    assert anyio.run(main) == _expected(platform, "reader")
    assert storage.client_info.client_id == document
    assert "/sdk/client.json" in cimd_server.requests
    assert Connection.all_tenants.get().client_id == document
