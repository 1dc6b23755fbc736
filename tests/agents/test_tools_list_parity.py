"""The tools an agent is offered are the member's own MCP tools/list, read with the official SDK client
in both protocol eras (names, descriptions and input schemas, in order)."""

from __future__ import annotations

import anyio
import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from agents.runs import start_run
from tests.agents.conftest import run_now, script
from tests.mcp_gateway.conftest import mcp_client

ERAS = ["legacy", "2026-07-28"]


async def _listed(url: str, token: str, mode: str) -> list[tuple]:
    found, cursor = [], None
    async with mcp_client(url, token, mode=mode) as client:
        while True:
            page = await client.list_tools(cursor=cursor)
            found += [(t.name, t.description, t.input_schema) for t in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                return found


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("username", ["reader", "writer", "member"])
def test_the_agent_is_offered_exactly_the_members_tools_list(
    mcp_url, cases_app, make_agent, make_token, mode, username
):
    model = script("ok")
    member = get_user_model().objects.get(username=username)
    with transaction.atomic():  # the run executes here, before its queued slice is sent (then a no-op)
        run = run_now(start_run(cases_app, make_agent(cases_app), member, "hi"), model)
    assert run.status == "completed", run.reason

    _, token = make_token(cases_app, username)
    over_mcp = anyio.run(_listed, mcp_url(), token, mode)
    offered = [(t.name, t.description, t.parameters_json_schema) for t in model.seen[0].function_tools]
    assert offered == over_mcp
