"""JSON or an event stream per POST (``mcp_gateway.transport.streaming``), against the SDK's own transport.

These tests pin the SDK internals the choice relies on (where the transport reads its flag, the
message router, context-carrying streams): a change there fails one of them.
"""

from __future__ import annotations

import contextlib
import json

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_gateway.protocol.context import streamed
from mcp_gateway.transport.streaming import StreamChoosingManager, progress_token
from tests.support.mcp_wire import ACCEPT, LEGACY, encode, modern_headers, open_legacy_session, request
from tests.support.servers import served

ASK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


async def _chooser(scope, message) -> bool:
    params = message.get("params") or {}
    return progress_token(params) is not None or params.get("name") == "ask"


async def _call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    token = (ctx.meta or {}).get("progress_token")
    # Tied to the request whether or not it streams: a JSON answer must drop it, not return it.
    await ctx.session.send_notification(
        types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level="info", data="hi")
        ),
        related_request_id=ctx.request_id,
    )
    if token is not None:
        for done in (1, 2, 3):
            await ctx.session.send_progress_notification(token, done, 3, f"step {done}", ctx.request_id)
    text = f"streamed={streamed()}"
    if params.name == "ask":
        answer = await ctx.session.elicit_form("Sure?", ASK_SCHEMA, related_request_id=ctx.request_id)
        text += f" answer={answer.action}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def _list_tools(ctx, params) -> types.ListToolsResult:
    schema = {"type": "object"}
    return types.ListToolsResult(tools=[types.Tool(name=n, input_schema=schema) for n in ("work", "ask")])


@pytest.fixture(scope="module", params=[False, True], ids=["stateful", "stateless"])
def server_url(request):
    server = Server("streaming-test", on_list_tools=_list_tools, on_call_tool=_call_tool)
    manager = StreamChoosingManager(app=server, json_response=True, stateless=request.param, chooser=_chooser)

    app = Starlette(routes=[Mount("/", app=manager.handle_request)], lifespan=lambda _: manager.run())
    with served(app) as base:
        yield f"{base}/{'stateless' if request.param else 'stateful'}/mcp"  # any path serves


@contextlib.asynccontextmanager
async def _client(url: str, mode: str, **kwargs):
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(20.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, **kwargs) as client:
            yield client


def _run_call(url: str, mode: str, name: str, *, with_progress: bool, **kwargs):
    seen: list[tuple] = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async def main():
        async with _client(url, mode, **kwargs) as client:
            callback = on_progress if with_progress else None
            return await client.call_tool(name, {}, progress_callback=callback)

    result = anyio.run(main)
    return result.content[0].text, seen


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_progress_reaches_a_caller_that_asked_for_it_in_order(server_url, mode):
    text, seen = _run_call(server_url, mode, "work", with_progress=True)

    assert text == "streamed=True"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_call_without_a_token_is_answered_as_json_and_its_notifications_are_dropped(server_url, mode):
    text, seen = _run_call(server_url, mode, "work", with_progress=False)

    assert text == "streamed=False"  # the log line tied to it did not take the answer's place
    assert seen == []


def test_elicitation_rides_the_stream_of_a_call_that_needs_it(server_url):
    asked: list[str] = []

    async def answer(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    def call() -> str:
        return _run_call(server_url, "legacy", "ask", with_progress=False, elicitation_callback=answer)[0]

    if "stateless" in server_url:
        # No session for the client's answer to land in: the SDK refuses to ask, the client is never asked.
        with pytest.raises(ExceptionGroup) as refused:
            call()
        assert refused.group_contains(MCPError, match="no back-channel") and asked == []
        return

    assert call() == "streamed=True answer=accept" and asked == ["Sure?"]


def _post(url: str, message: dict, headers: dict) -> httpx2.Response:
    return httpx2.post(url, content=encode(message), headers=headers, timeout=20.0)


def _legacy_headers(url: str, accept: str) -> dict:
    headers = {"Accept": accept, "Content-Type": "application/json", "MCP-Protocol-Version": LEGACY}
    if "stateless" not in url:
        headers["Mcp-Session-Id"] = open_legacy_session(url, token="unused")
    return headers


def _work_call(token: str | None) -> dict:
    params = {"name": "work", "arguments": {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return request("tools/call", params, modern=False)


def test_the_wire_shape_follows_the_need_on_the_handshake_era(server_url):
    plain = _post(server_url, _work_call(None), _legacy_headers(server_url, ACCEPT))
    progress = _post(server_url, _work_call("t1"), _legacy_headers(server_url, ACCEPT))

    assert plain.headers["content-type"] == "application/json"
    assert json.loads(plain.text)["result"]["content"][0]["text"] == "streamed=False"
    assert progress.headers["content-type"].startswith("text/event-stream")
    assert '"notifications/progress"' in progress.text and '"notifications/message"' in progress.text


def test_a_client_that_cannot_read_a_stream_gets_json_even_when_it_asked_for_progress(server_url):
    answer = _post(server_url, _work_call("t1"), _legacy_headers(server_url, "application/json"))

    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert json.loads(answer.text)["result"]["content"][0]["text"] == "streamed=False"


def test_the_wire_shape_follows_the_need_on_the_2026_era(server_url):
    plain = request("tools/call", {"name": "work", "arguments": {}})
    asked = request("tools/call", {"name": "work", "arguments": {}})
    asked["params"]["_meta"]["progressToken"] = "t1"

    plain_answer = _post(server_url, plain, modern_headers(None, plain))
    asked_answer = _post(server_url, asked, modern_headers(None, asked))

    assert plain_answer.headers["content-type"] == "application/json"
    assert asked_answer.headers["content-type"].startswith("text/event-stream")
    assert asked_answer.text.count('"notifications/progress"') == 3
