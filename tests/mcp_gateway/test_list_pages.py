"""Kept tools/list pages are exactly the fresh ones, per caller view, until the tenant changes."""

from __future__ import annotations

import anyio
import pytest

from mcp_gateway.transport.in_process import connect
from tenants import actions
from tests.support.apps import cases_manifest

# In process (mcp_gateway.transport.in_process): handlers read the test's rows from other threads.
pytestmark = pytest.mark.django_db(transaction=True)

WRITER_ONLY = "acme_cases_create_case"
READER_TOOL = "acme_cases_find_case"


@pytest.fixture
def app(acme, deploy, settings):
    settings.MCP_PAGE_SIZE = 4  # several pages from the test app's tools
    deploy(acme)
    return acme


def listing(slug: str, token: str, *, mode: str = "legacy", times: int = 1) -> list[list[dict]]:
    """Every tool of every page, ``times`` listings in one session, as the client received them."""

    async def main():
        listings = []
        async with connect(slug, token, mode=mode) as client:
            for _ in range(times):
                tools, cursor = [], None
                while True:
                    page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                    tools += [
                        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools
                    ]
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                listings.append(tools)
        return listings

    return anyio.run(main)


def names(tools: list[dict]) -> list[str]:
    return [tool["name"] for tool in tools]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_listing_served_from_kept_pages_is_the_fresh_listing(app, make_token, mode):
    token = make_token(app, "writer")[1]

    first, second, third = listing("acme", token, mode=mode, times=3)

    assert first == second == third
    assert WRITER_ONLY in names(first)


def test_callers_with_other_views_never_get_each_others_pages(app, make_token):
    writer = make_token(app, "writer")[1]
    reader = make_token(app, "reader")[1]
    read_only_writer = make_token(app, "writer", read_only=True)[1]

    writer_sees = names(listing("acme", writer, times=2)[-1])
    reader_sees = names(listing("acme", reader, times=2)[-1])
    read_only_sees = names(listing("acme", read_only_writer, times=2)[-1])

    assert WRITER_ONLY in writer_sees
    assert WRITER_ONLY not in reader_sees and READER_TOOL in reader_sees
    assert WRITER_ONLY not in read_only_sees and READER_TOOL in read_only_sees


def test_kept_pages_go_when_the_tenant_changes(app, make_token, deploy):
    token = make_token(app, "writer")[1]
    before = names(listing("acme", token, times=2)[-1])

    manifest = cases_manifest()
    manifest["mcp"]["tools"] = manifest["mcp"]["tools"][:2]
    deploy(app, manifest)
    after_deploy = names(listing("acme", token)[0])
    actions.set_tenant_setting(app, "customAppsMcpTools", False, acting_user=None)
    after_switch_off = names(listing("acme", token)[0])

    assert len([n for n in before if n.startswith("acme_cases_")]) > 2
    assert len([n for n in after_deploy if n.startswith("acme_cases_")]) == 2
    assert after_switch_off == [n for n in before if not n.startswith("acme_cases_")]


def test_a_page_size_change_is_not_answered_from_pages_of_the_old_size(app, make_token, settings):
    token = make_token(app, "writer")[1]
    small = listing("acme", token, times=2)[-1]

    settings.MCP_PAGE_SIZE = 100

    async def one_page():
        async with connect("acme", token) as client:
            return await client.list_tools()

    page = anyio.run(one_page)
    assert page.next_cursor is None and len(page.tools) == len(small)
