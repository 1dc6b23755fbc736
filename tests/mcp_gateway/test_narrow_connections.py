"""Connections narrowed to apps: a token's ``apps`` (``issue_token --apps``, the tokens API) shows and
calls only those apps' tools, resources, records and front-end routes; a tool the member may use but
the connection does not carry is the MCP authorization spec's step-up on HTTP (403
``insufficient_scope`` naming ``app:<name>`` or ``app:<name>:read``), -32602 elsewhere."""

from __future__ import annotations

import io

import anyio
import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from mcp_gateway.tools.call.calls import call_tool
from mcp_gateway.tools.catalog.catalog import catalog_for, needed_scope
from mcp_gateway.transport.in_process import connect
from tenants.callers import caller_for_token
from tenants.models import ApiToken
from tests.mcp_gateway.conftest import all_tool_names
from tests.mcp_gateway.test_confirmation import FILES as LEDGER_FILES
from tests.mcp_gateway.test_confirmation import MANIFEST as LEDGER
from tests.support import mcp_wire as wire

MODES = ["legacy", "2026-07-28"]
STEP_UP_CASES = 'Bearer error="insufficient_scope", scope="app:cases"'
STEP_UP_CASES_READ = 'Bearer error="insufficient_scope", scope="app:cases:read"'


@pytest.fixture
def two_apps(transactional_db, acme, deploy):
    deploy(acme)  # cases
    deploy(acme, LEDGER, LEDGER_FILES)
    return acme


@pytest.fixture
def ledger_only(two_apps, make_token):
    return make_token(two_apps, "writer", apps=["ledger"])[1]


def run(raw: str, work, mode: str = "legacy"):
    async def main():
        async with connect("acme", raw, mode=mode) as client:
            return await work(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", MODES)
def test_a_narrowed_token_lists_and_calls_only_its_apps(two_apps, ledger_only, make_token, mode):
    names = run(ledger_only, all_tool_names, mode)
    full = run(make_token(two_apps, "writer")[1], all_tool_names, mode)

    assert "acme_ledger_peek" in names and "acme_search_tools" in names
    assert not [n for n in names if n.startswith("acme_cases_")]
    assert [n for n in full if n.startswith("acme_cases_")]  # the member's own rights reach them
    peek = run(ledger_only, lambda c: c.call_tool("acme_ledger_peek", {"account": "a1"}), mode)
    assert peek.is_error is False and peek.structured_content == {"account": "a1"}


@pytest.mark.parametrize("mode", MODES)
def test_a_call_outside_its_apps_is_refused_naming_the_scope(ledger_only, mode):
    async def work(client):
        with pytest.raises(MCPError) as caught:
            await client.call_tool("acme_cases_echo", {"thing": "x"})
        return caught.value

    error = run(ledger_only, work, mode)

    assert error.error.code == INVALID_PARAMS and "app:cases" in error.error.message


def _post_call(mcp_url, token: str, name: str, arguments: dict) -> httpx2.Response:
    message = wire.request("tools/call", {"name": name, "arguments": arguments})
    headers = {**wire.modern_headers(token, message), "Accept": "application/json"}
    return httpx2.post(mcp_url(), content=wire.encode(message), headers=headers, timeout=30)


def test_http_answers_the_step_up_for_a_tool_the_member_may_use(mcp_url, ledger_only):
    write = _post_call(mcp_url, ledger_only, "acme_cases_echo", {"thing": "x"})
    read = _post_call(mcp_url, ledger_only, "acme_cases_find_case", {"query": "ab"})

    assert write.status_code == 403 and write.headers["www-authenticate"] == STEP_UP_CASES
    assert read.status_code == 403 and read.headers["www-authenticate"] == STEP_UP_CASES_READ
    assert "app:cases" in write.json()["error"]


def test_a_tool_the_member_may_not_use_at_all_stays_minus_32602(mcp_url, two_apps, make_token):
    raw = make_token(two_apps, "member", apps=["ledger"])[1]  # no case role: find_case is not theirs

    response = _post_call(mcp_url, raw, "acme_cases_find_case", {"query": "ab"})
    unknown = _post_call(mcp_url, raw, "acme_nothing_here", {})

    assert response.status_code != 403 and response.json()["error"]["code"] == INVALID_PARAMS
    assert unknown.status_code != 403 and unknown.json()["error"]["code"] == INVALID_PARAMS


def test_read_only_narrowing_names_the_read_scope(two_apps, ledger_only):
    caller = caller_for_token(two_apps, ledger_only)
    entries = catalog_for(two_apps).by_name
    read_caller = caller.__class__(
        **{**caller.__dict__, "apps": ("cases", "ledger"), "read_apps": ("cases",)}
    )

    assert needed_scope(entries["acme_cases_find_case"], caller) == "app:cases:read"
    assert needed_scope(entries["acme_cases_echo"], read_caller) == "app:cases"
    assert needed_scope(entries["acme_cases_find_case"], read_caller) is None  # carried read-only
    assert needed_scope(entries["acme_ledger_peek"], caller) is None


def test_the_record_built_ins_see_only_the_carried_apps(two_apps, ledger_only):
    caller = caller_for_token(two_apps, ledger_only)

    listed = call_tool(two_apps, caller, "acme_collections_list", {})
    query = call_tool(two_apps, caller, "acme_records_query", {"app": "cases", "collection": "cases"})

    assert [app["app"] for app in listed.structured_content["apps"]] == ["ledger"]
    assert query.is_error is True


def test_the_front_end_path_serves_only_the_carried_apps(live_url, ledger_only):
    headers = {"Authorization": f"Bearer {ledger_only}"}
    cases = httpx2.get(f"{live_url}/t/acme/apps/cases/cases/search?query=ab", headers=headers, timeout=30)
    ledger = httpx2.get(f"{live_url}/t/acme/apps/ledger/accounts/a1", headers=headers, timeout=30)

    assert cases.status_code == 403 and ledger.status_code == 200


def test_issue_token_apps_and_the_tokens_api(two_apps, api_client):
    out = io.StringIO()
    call_command("issue_token", "acme", "writer", "--apps", "ledger, cases", stdout=out)
    raw = out.getvalue().strip()
    assert caller_for_token(two_apps, raw).apps == ("cases", "ledger")

    api_client.force_authenticate(get_user_model().objects.get(username="admin"))
    made = api_client.post(
        "/api/tenants/acme/tokens", {"username": "writer", "apps": ["ledger"]}, format="json"
    )
    assert made.status_code == 201 and made.json()["details"]["apps"] == ["ledger"]
    bad = api_client.post("/api/tenants/acme/tokens", {"username": "writer", "apps": ["No"]}, format="json")
    assert bad.status_code == 400
    assert ApiToken.objects.for_tenant(two_apps).filter(apps=[]).count() == 0
