"""The step-up through the official SDK client over HTTP: an OAuth connection narrowed on the
consent page to one app calls another app's tool; the gateway answers 403 ``insufficient_scope``
naming ``app:<name>``; the SDK's OAuth provider (SEP-2350 step-up) asks the person again for the
scope it had plus the one named, the consent page preselects both, and the person's consent gives a
connection that carries the tool.

2026-07-28 (no session): the SDK retries the call with the new token and it runs. 2025-11-25: the
session belongs to the credential that opened it (the SDK's session manager), and the wider
consent is a new connection, so the retried call on the old session is 404 ``Session not found``,
which the SDK client raises rather than opening a new session; a new session with the token the
provider now holds calls the tool without asking the person again.

A static API token narrowed with ``--apps`` has nobody to ask: the SDK client (no OAuth provider)
gets the same 403 and header, and raises ``MCPError`` -32603 "Server returned an error response",
without the status or the scope."""

from __future__ import annotations

import re
from io import StringIO

import anyio
import httpx2
import pytest
from django.core.management import call_command
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from oauth.models import Connection
from tests.mcp_gateway.conftest import all_tool_names
from tests.mcp_gateway.test_confirmation import FILES as LEDGER_FILES
from tests.mcp_gateway.test_confirmation import MANIFEST as LEDGER
from tests.oauth.live import PASSWORD, MemoryStorage, Person, oauth_client, provider

ECHO = ("acme_cases_echo", {"thing": "hi"})
STEP_UP = 'Bearer error="insufficient_scope", scope="app:cases"'


@pytest.fixture
def platform(mcp_url, acme, deploy, settings):
    deploy(acme)  # cases
    deploy(acme, LEDGER, LEDGER_FILES)
    settings.PUBLIC_BASE_URL = mcp_url("acme").split("/t/")[0]
    call_command("set_password", "writer", stdin=StringIO(PASSWORD + "\n"), stdout=StringIO())
    return acme


def narrowed_person() -> Person:
    """Consents first to the ledger app only, then (asked again) to what the page preselects."""
    return Person("writer", app_choices=[{"cases": "none", "ledger": "full"}])


def _app_choice(html: str, app: str) -> str:
    """The choice the consent page preselected for ``app``."""
    found = re.search(rf'name="app_{app}" value="(\w+)" checked', html)
    return found.group(1) if found else ""


def test_2026_the_sdk_steps_up_to_the_wider_scope_after_consent_and_the_call_runs(mcp_url, platform):
    person, storage = narrowed_person(), MemoryStorage()
    auth = provider(mcp_url(), person, storage)

    async def main():
        async with oauth_client(auth, mcp_url(), mode="2026-07-28") as client:
            names = await all_tool_names(client)
            narrow_token = storage.tokens.access_token
            echoed = await client.call_tool(*ECHO)  # 403 step-up, consent again, the same call again
            return names, narrow_token, echoed

    names, narrow_token, echoed = anyio.run(main)
    assert not [name for name in names if name.startswith("acme_cases_")]
    assert person.visits == 2 and storage.tokens.access_token != narrow_token
    assert echoed.is_error is False and echoed.structured_content["user"]["username"] == "writer"
    # Asked again with the scope it had plus the one the 403 named: both apps preselected in full.
    assert _app_choice(person.consent_pages[1], "cases") == "full"
    assert _app_choice(person.consent_pages[1], "ledger") == "full"
    assert sorted(map(tuple, Connection.all_tenants.values_list("apps", flat=True))) == [(), ("app:ledger",)]


def test_2025_the_sdk_steps_up_but_its_old_session_is_refused_and_a_new_one_calls(mcp_url, platform):
    person, storage = narrowed_person(), MemoryStorage()
    auth = provider(mcp_url(), person, storage)

    async def main():
        async with oauth_client(auth, mcp_url(), mode="legacy") as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(*ECHO)
        async with oauth_client(auth, mcp_url(), mode="legacy") as client:  # a new session
            return refused.value, await client.call_tool(*ECHO)

    refused, echoed = anyio.run(main)
    assert person.visits == 2  # the step-up's consent happened
    assert "Session not found" in refused.error.message
    assert echoed.is_error is False and person.visits == 2  # the wider token, no third consent


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_narrowed_api_token_gets_the_403_and_the_sdk_raises_a_generic_error(
    mcp_url, platform, make_token, mode
):
    token = make_token(platform, "writer", apps=["ledger"])[1]
    answers: list[httpx2.Response] = []

    async def seen(response: httpx2.Response) -> None:
        answers.append(response)

    async def main():
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [seen]}) as http:
            async with Client(streamable_http_client(mcp_url(), http_client=http), mode=mode) as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool(*ECHO)
                return raised.value

    error = anyio.run(main)
    step_ups = [answer for answer in answers if answer.status_code == 403]
    assert len(step_ups) == 1 and step_ups[0].headers["www-authenticate"] == STEP_UP
    assert error.error.code == -32603 and error.error.message == "Server returned an error response"
