"""Issue 26 item 9, the gateway's part: malformed calls and hostile handler output are answered as
the caller's or the tool's fault, bounded, and never break the answer."""

from __future__ import annotations

import anyio
import httpx2
import mcp.types as types
import pytest

from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import _tool
from tests.support.mcp_wire import ACCEPT, legacy_initialize

ROUTES = {
    "surrogate": 'def handle(request):\n    return {"text": "ok \\ud800 then"}\n',
    "noisy": (
        "def handle(request):\n"
        '    request.log("info", "bad \\udc80 text")\n'
        '    request.progress(1, 2, "half \\ud800")\n'
        '    return {"done": True}\n'
    ),
}
MANIFEST = {
    "name": "hostile",
    "routes": {f"POST /{name}": {"handler": f"server/{name}.py", "auth": "user"} for name in ROUTES},
    "mcp": {"tools": [_tool(name, f"POST /{name}") for name in ROUTES]},
}
MODES = ["legacy", "2026-07-28"]


@pytest.fixture
def token(mcp_url, acme, deploy, make_token):
    deploy(acme)
    deploy(acme, MANIFEST, {f"server/{name}.py": source for name, source in ROUTES.items()})
    return make_token(acme, "member")[1]


def test_a_tools_call_whose_name_is_not_a_string_is_a_json_rpc_error_not_a_500(mcp_url, token):
    async def main():
        headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(mcp_url(), headers=headers, json=legacy_initialize())
            session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": [1], "arguments": {}},
            }
            answer = await http.post(mcp_url(), headers=session, json=call)
            await http.delete(mcp_url(), headers=session)
            return answer

    answer = anyio.run(main)
    assert answer.status_code < 500
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["code"] == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", MODES)
def test_a_lone_surrogate_in_a_handlers_result_is_the_tools_error(mcp_url, token, mode):
    async def main():
        async with mcp_client(mcp_url(), token, mode=mode) as client:
            return await client.call_tool("acme_hostile_surrogate", {})

    result = anyio.run(main)
    assert result.is_error is True
    assert "cannot send: /text: is not valid Unicode text" in result.content[0].text
    audit = ToolCallAudit.all_tenants.filter(wire_name="acme_hostile_surrogate").latest("pk")
    assert audit.outcome == ToolCallAudit.Outcome.TOOL_ERROR  # not blamed on the platform


@pytest.mark.parametrize("mode", MODES)
def test_a_lone_surrogate_in_a_log_line_or_progress_keeps_the_stream_whole(mcp_url, token, mode):
    lines, seen = [], []

    async def on_log(params: types.LoggingMessageNotificationParams):
        lines.append(params.data)

    async def on_progress(done, total, message):
        seen.append(message)

    async def main():
        level = "info" if mode != "legacy" else None
        async with mcp_client(
            mcp_url(), token, mode=mode, logging_callback=on_log, log_level=level
        ) as client:
            if mode == "legacy":
                await client.set_logging_level("info")
            return await client.call_tool("acme_hostile_noisy", {}, progress_callback=on_progress)

    result = anyio.run(main)
    assert result.is_error is False and result.structured_content == {"done": True}
    assert "bad ? text" in [str(line) for line in lines]  # the lone surrogate replaced, the stream whole
    assert seen == ["half ?"]


def test_a_where_with_thousands_of_keys_is_refused_without_repeating_it(mcp_url, token):
    where = {f"k{n}": n for n in range(60_000)}

    async def main():
        async with mcp_client(mcp_url(), token) as client:
            return await client.call_tool(
                "acme_records_query", {"app": "cases", "collection": "cases", "where": where}
            )

    result = anyio.run(main)
    assert result.is_error is True
    text = "\n".join(block.text for block in result.content)
    assert len(text) < 5000 and "maxProperties" in text
