"""search_tools and the toolDiscovery setting, through the official MCP client in both protocol eras."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from apps_runtime.deploy import rollback_app
from mcp_gateway.transport.in_process import connect
from tenants import actions
from tests.mcp_gateway.test_screens import UiHost
from tests.support.screen_app import FILES as SCREEN_FILES
from tests.support.screen_app import screen_manifest
from tests.support.search_apps import APPS, ECHO, PEOPLE, app_manifest

# In process (mcp_gateway.transport.in_process): handlers read the test's rows from other threads.
pytestmark = pytest.mark.django_db(transaction=True)

ERAS = ["legacy", "2026-07-28"]
SEARCH = "acme_search_tools"
# Requests as users word them; several have a near-duplicate in another app, or need a role.
QUERIES = [
    "bill a customer for last month's work",
    "give a client their money back",
    "approve next year's budget for marketing",
    "show me what invoices are still open",
    "I want to take a week of vacation",
    "what is Dana's phone number",
    "draft an offer for a new prospect",
    "delete every record",
    "invoice",
]


@pytest.fixture
def tenant(acme, make_member, deploy):
    make_member(acme, "accountant", roles=["finance"])
    make_member(acme, "chief", roles=["finance", "executive"])
    for manifest in APPS:
        deploy(acme, manifest, ECHO)
    return acme


@pytest.fixture
def token(tenant, make_token):
    return lambda username, **kw: make_token(tenant, username, **kw)[1]


def session(slug, raw, mode, work):
    async def main():
        async with connect(slug, raw, mode=mode) as client:
            return await work(client)

    return anyio.run(main)


async def listing(client) -> dict[str, dict]:
    tools, cursor = {}, None
    while True:
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            tools[tool.name] = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
        if (cursor := page.next_cursor) is None:
            return tools


async def search(client, query: str, limit: int = 20) -> dict:
    result = await client.call_tool(SEARCH, {"query": query, "limit": limit})
    assert result.is_error is False, result.content
    return result.structured_content


@pytest.mark.parametrize("mode", ERAS)
def test_search_finds_the_tool_for_an_intent_as_its_exact_listing_entry(token, mode):
    async def work(client):
        return await listing(client), await search(client, "bill a customer for last month's work", 3)

    listed, found = session("acme", token("accountant"), mode, work)
    assert found["canSatisfyIntent"] is True
    assert [t["name"] for t in found["tools"]][0] == "acme_billing_create_invoice"
    assert len(found["tools"]) <= 3
    for entry in found["tools"]:
        assert entry == listed[entry["name"]]
    assert "acme_billing_create_invoice" in found["summary"]
    assert found["nextSteps"].startswith("Call acme_billing_create_invoice")


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("username", "read_only"),
    [("member", False), ("accountant", False), ("accountant", True), ("chief", True), ("chief", False)],
)
def test_search_returns_only_tools_the_caller_lists_whatever_is_asked(token, mode, username, read_only):
    async def work(client):
        listed = await listing(client)
        return listed, [await search(client, q) for q in QUERIES]

    listed, results = session("acme", token(username, read_only=read_only), mode, work)
    for query, found in zip(QUERIES, results, strict=True):
        names = [t["name"] for t in found["tools"]]
        assert set(names) <= set(listed), (query, set(names) - set(listed))
        assert SEARCH not in names


@pytest.mark.parametrize("mode", ERAS)
def test_a_caller_without_the_role_is_told_no_tool_fits(token, mode):
    async def work(client):
        return await search(client, "approve next year's budget for marketing")

    found = session("acme", token("accountant"), mode, work)
    assert "acme_board_approve_budget" not in [t["name"] for t in found["tools"]]
    assert found["canSatisfyIntent"] is False
    assert found["summary"].startswith("No tool available to you")
    chief = session("acme", token("chief"), mode, work)
    assert chief["tools"][0]["name"] == "acme_board_approve_budget" and chief["canSatisfyIntent"] is True


def test_read_only_tokens_and_switched_off_app_tools_narrow_the_search(token, tenant):
    async def work(client):
        return await search(client, "give a client their money back")

    found = session("acme", token("accountant", read_only=True), "legacy", work)
    names = [t["name"] for t in found["tools"]]
    assert "acme_billing_refund_payment" not in names
    assert "acme_billing_list_invoices" in names
    actions.set_tenant_setting(tenant, "customAppsMcpTools", False, acting_user=None)
    names = [t["name"] for t in session("acme", token("accountant"), "legacy", work)["tools"]]
    assert names and all(name.startswith(("acme_records_", "acme_collections_")) for name in names)


@pytest.mark.parametrize("mode", ERAS)
def test_search_mode_lists_builtins_and_pinned_tools_and_every_tool_stays_callable(token, tenant, mode):
    actions.set_tenant_setting(tenant, "toolDiscovery", "search", acting_user=None)

    async def work(client):
        listed = await listing(client)
        found = await search(client, "what is Dana's phone number", 1)
        called = await client.call_tool("acme_people_find_colleague", {"text": "Dana"})
        try:
            await client.call_tool("acme_billing_create_invoice", {})
        except MCPError as err:
            hidden = err.error.code
        return listed, found, called, hidden

    listed, found, called, hidden = session("acme", token("member"), mode, work)
    assert sorted(n for n in listed if not n.startswith(("acme_records_", "acme_collections_"))) == [
        "acme_people_request_leave",
        "acme_run_code",
        "acme_search_tools",
    ]
    assert found["tools"][0]["name"] == "acme_people_find_colleague"
    assert called.is_error is False and called.structured_content["tool"] == "acme_people_find_colleague"
    assert hidden == -32602  # found by neither search nor name: the member lacks the finance role


def test_search_follows_deploys_rollbacks_and_role_changes_at_once(token, tenant, deploy):
    raw = token("member")

    async def work(client):
        return [t["name"] for t in (await search(client, "bill a customer for work done"))["tools"]]

    assert "acme_billing_create_invoice" not in session("acme", raw, "legacy", work)
    actions.update_member(tenant, "member", roles=["finance"], acting_user=None)
    assert session("acme", raw, "legacy", work)[0] == "acme_billing_create_invoice"

    def ask_for_payroll(client):
        return search(client, "run payroll for this month")

    tools = [*PEOPLE["mcp"]["tools"], _payroll_tool()]
    deploy(tenant, app_manifest("people", "People", "user", tools), ECHO)
    found = session("acme", raw, "2026-07-28", ask_for_payroll)
    assert found["tools"][0]["name"] == "acme_people_run_payroll"
    rollback_app(tenant, "people", acting_user=None)
    found = session("acme", raw, "2026-07-28", ask_for_payroll)
    assert "acme_people_run_payroll" not in [t["name"] for t in found["tools"]]


def _payroll_tool() -> dict:
    tool = dict(PEOPLE["mcp"]["tools"][1])
    return {
        **tool,
        "name": "run_payroll",
        "title": "Run payroll",
        "description": "Pay every employee their monthly salary.",
        "keywords": ["wages"],
    }


def test_bad_arguments_to_search_are_a_tool_error_listing_them(token):
    async def work(client):
        return await client.call_tool(SEARCH, {"query": "", "limit": 21})

    result = session("acme", token("member"), "legacy", work)
    assert result.is_error is True
    text = result.content[0].text
    assert "/query" in text and "/limit" in text


@pytest.mark.parametrize("mode", ERAS)
def test_search_follows_the_clients_ui_capability_as_tools_list_does(acme, deploy, make_token, mode):
    deploy(acme, screen_manifest(), SCREEN_FILES)
    raw = make_token(acme, "reader")[1]

    async def work(client):
        listed = await listing(client)
        found = await search(client, "Card Only Test tool card_only that calls GET /cases/{case_id}.")
        return listed, [t["name"] for t in found["tools"]]

    async def main(ui):
        extensions = [UiHost()] if ui else None
        async with connect("acme", raw, mode=mode, extensions=extensions) as client:
            return await work(client)

    listed, plain = anyio.run(main, False)
    assert "acme_cases_card_only" not in plain and set(plain) <= set(listed)
    assert "acme_cases_refresh" not in plain  # app-only: called from its view, never offered to a model
    listed, host = anyio.run(main, True)
    assert host[0] == "acme_cases_card_only" and set(host) <= set(listed)
    assert "acme_cases_refresh" not in host
