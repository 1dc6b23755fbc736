"""App screens as MCP Apps views, through the official MCP client in both protocol eras.

A client that shows views declares ``extensions["io.modelcontextprotocol/ui"]`` with the
``text/html;profile=mcp-app`` MIME type; ``UiHost`` below is that declaration.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError
from mcp.client.extension import ClientExtension

from apps_runtime.screens import SCREEN_MIME_TYPE, SDK_PATH, UI_EXTENSION
from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import all_tool_names, mcp_client
from tests.support.screen_app import CARD_CSS, FILES, screen_manifest

MODES = ["legacy", "2026-07-28"]
CARD = "ui://cases/card"


class UiHost(ClientExtension):
    identifier = UI_EXTENSION

    def settings(self) -> dict:
        return {"mimeTypes": [SCREEN_MIME_TYPE]}


@pytest.fixture
def app(mcp_url, acme, deploy):
    deploy(acme, screen_manifest(), FILES)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kwargs: make_token(app, username, **kwargs)[1]


def run(url, raw, work, mode="legacy", ui=False):
    async def main():
        extensions = [UiHost()] if ui else None
        async with mcp_client(url, raw, mode=mode, extensions=extensions) as client:
            return await work(client)

    return anyio.run(main)


async def tools_by_name(client):
    return {tool.name: tool for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("mode", MODES)
def test_the_gateway_advertises_the_ui_extension(mcp_url, token, mode):
    async def work(client):
        return client.server_capabilities

    # "auto" asks server/discover (a 2026-07-28 client pinned to a version would not ask).
    capabilities = run(mcp_url(), token("reader"), work, "auto" if mode != "legacy" else mode)
    # 2026-07-28 names extensions; 2025-11-25 has no such capability, so hosts look under experimental.
    declared = capabilities.extensions if mode != "legacy" else capabilities.experimental
    assert declared[UI_EXTENSION] == {"mimeTypes": [SCREEN_MIME_TYPE]}


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_that_shows_a_screen_lists_its_view(mcp_url, token, mode):
    tools = run(mcp_url(), token("reader"), tools_by_name, mode)
    meta = tools["acme_cases_get_case"].meta
    assert meta["ui"] == {"resourceUri": CARD, "visibility": ["model", "app"]}
    assert meta["ui/resourceUri"] == CARD
    assert tools["acme_cases_find_case"].meta is None


@pytest.mark.parametrize("mode", MODES)
def test_ui_only_tools_are_listed_only_to_clients_that_show_views(mcp_url, token, mode):
    plain = run(mcp_url(), token("reader"), all_tool_names, mode)
    host = run(mcp_url(), token("reader"), all_tool_names, mode, ui=True)
    assert "acme_cases_get_case" in plain and "acme_cases_get_case" in host
    assert "acme_cases_card_only" not in plain
    assert "acme_cases_card_only" in host
    # A tool for views alone is never offered to the model, whatever the client.
    assert "acme_cases_refresh" not in plain and "acme_cases_refresh" not in host


@pytest.mark.parametrize("mode", MODES)
def test_an_app_only_tool_answers_only_a_client_that_shows_views(mcp_url, token, mode):
    async def call(client):
        return await client.call_tool("acme_cases_refresh", {"case_id": "nope"})

    async def refused(client):
        with pytest.raises(MCPError) as caught:
            await call(client)
        return caught.value.error

    error = run(mcp_url(), token("reader"), refused, mode)
    assert error.code == -32602
    assert "called from its app's view" in error.message
    from_view = run(mcp_url(), token("reader"), call, mode, ui=True)
    assert from_view.is_error and "not found" in from_view.content[0].text  # the route ran, as the caller
    # A tool listed only to UI hosts is still answered when called by name, with its structured result.
    by_name = run(
        mcp_url(), token("reader"), lambda c: c.call_tool("acme_cases_card_only", {"case_id": "x"}), mode
    )
    assert by_name.is_error and "not found" in by_name.content[0].text


@pytest.mark.parametrize("mode", MODES)
def test_the_view_is_one_html_document_with_its_csp(mcp_url, app, token, mode, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    result = run(mcp_url(), token("reader"), lambda client: client.read_resource(CARD), mode, ui=True)
    (contents,) = result.contents
    assert contents.mime_type == SCREEN_MIME_TYPE
    html = contents.text
    assert CARD_CSS.strip() in html and 'new App({name: "card"' in html  # stylesheet and script inlined
    assert "data:image/png;base64," in html  # the image too: a host renders the text alone
    assert '"@modelcontextprotocol/ext-apps": "http://' in html and SDK_PATH in html  # the import map
    assert '"get_case": "acme_cases_get_case"' in html  # the wire names its view calls
    ui = contents.meta["ui"]
    assert ui["csp"]["connectDomains"] == ["https://api.example.com"]
    assert ui["csp"]["resourceDomains"][0].startswith("http://127.0.0.1:")  # where the SDK comes from
    assert ui["permissions"] == {"clipboardWrite": {}}
    assert ui["prefersBorder"] is True
    row = ToolCallAudit.objects.for_tenant(app).filter(method="resources/read").latest("id")
    assert (row.wire_name, row.outcome) == ("acme_cases_card", ToolCallAudit.Outcome.OK)


@pytest.mark.parametrize("mode", MODES)
def test_screens_are_listed_and_read_only_by_callers_who_may_open_them(mcp_url, token, mode):
    async def listing(client):
        return [r.uri for r in (await client.list_resources()).resources if r.uri.startswith("ui://")]

    assert run(mcp_url(), token("reader"), listing, mode) == [CARD]
    assert run(mcp_url(), token("writer"), listing, mode) == [CARD, "ui://cases/plain"]

    async def read_plain(client):
        with pytest.raises(MCPError) as refused:
            await client.read_resource("ui://cases/plain")
        return refused.value.error.code

    assert run(mcp_url(), token("reader"), read_plain, mode) == (-32602 if mode != "legacy" else -32002)


def test_app_resources_switched_off_take_the_screens_along(mcp_url, app, token):
    from tenants.actions import set_tenant_setting

    set_tenant_setting(app, "customAppsMcpTools", False, acting_user=None)

    async def listing(client):
        return [r.uri for r in (await client.list_resources()).resources]

    assert run(mcp_url(), token("reader"), listing, ui=True) == []


def test_the_view_calls_the_wire_names_stored_at_deploy_even_after_the_limit_changed(
    mcp_url, app, token, settings
):
    settings.MCP_WIRE_NAME_LIMIT = 16  # deployed under 64: "acme_cases_get_case" would now be cut and hashed
    result = run(mcp_url(), token("reader"), lambda client: client.read_resource(CARD), ui=True)
    (contents,) = result.contents
    assert '"get_case": "acme_cases_get_case"' in contents.text
