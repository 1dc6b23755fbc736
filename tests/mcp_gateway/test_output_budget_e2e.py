"""Output budgets through the official MCP client: app tools and built-in tools, cut or refused."""

from __future__ import annotations

import anyio
import pytest

from mcp_gateway.models import ToolCallAudit
from tenants import actions
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import HANDLERS, _tool, cases_manifest_plus

ROWS = """
def handle(request):
    offset = int(request.query.get("offset", 0))
    limit = int(request.query.get("limit", 1000))
    rows = [{"id": i, "title": "Row number %d" % i} for i in range(1000)]
    return {"rows": rows[offset:offset + limit], "total": 1000}
"""
PAGING = {"offset": {"type": "integer"}, "limit": {"type": "integer"}}
ESSAY = """
def handle(request):
    return {"essay": "word " * 2000}
"""


@pytest.fixture
def app(mcp_url, acme, deploy):
    manifest = cases_manifest_plus(
        {
            "GET /rows": {"handler": "server/rows.py", "auth": "user"},
            "GET /essay": {"handler": "server/essay.py", "auth": "user"},
        },
        [
            _tool("rows", "GET /rows", PAGING, maxOutputTokens=500),
            _tool("essay", "GET /essay", maxOutputTokens=500),
        ],
    )
    deploy(acme, manifest, {**HANDLERS, "server/rows.py": ROWS, "server/essay.py": ESSAY})
    return acme


ERAS = ["legacy", "2026-07-28"]  # the initialize handshake, and the handshake-free protocol


def call(url: str, raw: str, steps: list[tuple[str, dict]], mode: str = "legacy") -> list:
    async def main():
        async with mcp_client(url, raw, mode=mode) as client:
            return [await client.call_tool(name, arguments) for name, arguments in steps]

    return anyio.run(main)


@pytest.mark.parametrize("mode", ERAS)
def test_a_long_list_comes_back_cut_with_its_counts_and_how_to_get_the_rest(app, mcp_url, make_token, mode):
    raw = make_token(app, "member")[1]
    (first,) = call(mcp_url(), raw, [("acme_cases_rows", {})], mode)
    assert first.is_error is False
    kept = first.structured_content
    n = kept["truncated"]["returned"]
    assert kept["truncated"] == {"returned": n, "total": 1000} and 0 < n < 1000
    assert [row["id"] for row in kept["rows"]] == list(range(n)) and kept["total"] == 1000
    note = first.content[1].text
    assert f'returned {n} of 1000 items of "rows"' in note
    assert f"`offset` increased by {n} and `limit` at most {n}" in note
    # Following the note gets the next items, and it fits.
    (second,) = call(mcp_url(), raw, [("acme_cases_rows", {"offset": n, "limit": n})], mode)
    assert "truncated" not in second.structured_content
    assert [row["id"] for row in second.structured_content["rows"]] == list(range(n, 2 * n))
    assert ToolCallAudit.objects.for_tenant(app).filter(outcome="ok").count() == 2


@pytest.mark.parametrize("mode", ERAS)
def test_a_long_result_that_is_not_a_list_is_an_error_with_its_size_and_the_budget(
    app, mcp_url, make_token, mode
):
    (result,) = call(mcp_url(), make_token(app, "member")[1], [("acme_cases_essay", {})], mode)
    assert result.is_error is True and result.structured_content is None
    # {"essay":"word word ..."}: 10,012 bytes of JSON, so 2,503 tokens.
    assert "about 2,503 tokens, over this tool's output budget of 500 tokens" in result.content[0].text
    assert ToolCallAudit.objects.for_tenant(app).get().outcome == "tool_error"


def test_built_in_tools_follow_the_tenant_budget(app, mcp_url, make_token):
    steps = [
        ("acme_records_create", {"app": "cases", "collection": "cases", "data": {"client_name": f"C{i:03}"}})
        for i in range(40)
    ]
    raw = make_token(app, "writer")[1]
    call(mcp_url(), raw, steps)
    actions.set_tenant_setting(app, "maxOutputTokens", 600, acting_user=None)
    (result,) = call(mcp_url(), raw, [("acme_records_query", {"app": "cases", "collection": "cases"})])
    kept = result.structured_content
    n = kept["truncated"]["returned"]
    assert kept["truncated"] == {"returned": n, "total": 40} and 0 < n < 40
    assert len(kept["items"]) == n
    assert f"`limit` at most {n} and page with `cursor`" in result.content[1].text
