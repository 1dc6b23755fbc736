"""A handler stopped by its route's time limit: the caller is told it timed out, and after how long."""

from __future__ import annotations

import anyio

from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import HANDLERS, cases_manifest_plus

LOOP_TOOL = {
    "name": "spin",
    "description": "Never answers: its route stops it after 300 ms.",
    "route": "GET /loop",
    "inputSchema": {"type": "object", "properties": {}},
}


def test_a_handler_timeout_says_it_timed_out_and_after_how_long(mcp_url, acme, deploy, make_token):
    deploy(acme, cases_manifest_plus({}, [LOOP_TOOL]), HANDLERS)
    raw = make_token(acme, "reader")[1]

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            return await client.call_tool("acme_cases_spin", {})

    result = anyio.run(main)
    assert result.is_error is True
    text = result.content[0].text
    audit = ToolCallAudit.objects.for_tenant(acme).get()
    assert text.startswith(
        f"Tool timed out after 0.3 s (the route's time limit) (error id {audit.error_id})."
    )
    assert audit.outcome == "handler_failed"
