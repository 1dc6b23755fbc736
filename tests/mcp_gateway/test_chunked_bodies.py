"""A POST whose JSON-RPC body arrives in several chunks (chunked transfer encoding) is judged like a
single-chunk one before dispatch: a narrowed connection's call outside its apps gets the step-up
(403 ``insufficient_scope``), a call it carries runs. A plain HTTP client sending chunks, in both
protocol eras; and the transport's peek (``peek_body``) on its own, since the SDK's body limit
middleware in front of it joins the chunks already."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx2
import pytest

from mcp_gateway.transport.streaming import peek_body
from tests.mcp_gateway.test_narrow_connections import STEP_UP_CASES, ledger_only, two_apps  # noqa: F401
from tests.support import mcp_wire as wire

OUTSIDE = ("acme_cases_echo", {"thing": "x"})
CARRIED = ("acme_ledger_peek", {"account": "a1"})


def chunks(body: bytes, size: int = 7) -> Iterator[bytes]:
    """``body`` in ``size``-byte pieces: httpx sends a generator with ``Transfer-Encoding: chunked``."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


def post(url: str, body: bytes, headers: dict[str, str], *, chunked: bool) -> httpx2.Response:
    return httpx2.post(url, content=chunks(body) if chunked else body, headers=headers, timeout=30)


@pytest.mark.parametrize("chunked", [False, True], ids=["one-chunk", "chunked"])
def test_2026_a_chunked_call_gets_the_same_step_up_and_runs_the_same(mcp_url, ledger_only, chunked):  # noqa: F811
    answers = {}
    for name, arguments in (OUTSIDE, CARRIED):
        message = wire.request("tools/call", {"name": name, "arguments": arguments})
        headers = {**wire.modern_headers(ledger_only, message), "Accept": "application/json"}
        answers[name] = post(mcp_url(), wire.encode(message), headers, chunked=chunked)

    refused, ran = answers[OUTSIDE[0]], answers[CARRIED[0]]
    assert chunked is (refused.request.headers.get("transfer-encoding") == "chunked")
    assert refused.status_code == 403 and refused.headers["www-authenticate"] == STEP_UP_CASES
    assert ran.status_code == 200 and ran.json()["result"]["structuredContent"] == {"account": "a1"}


@pytest.mark.parametrize("chunked", [False, True], ids=["one-chunk", "chunked"])
def test_2025_session_a_chunked_call_gets_the_same_step_up(mcp_url, ledger_only, chunked):  # noqa: F811
    session = wire.open_legacy_session(mcp_url(), ledger_only)
    message = wire.request("tools/call", {"name": OUTSIDE[0], "arguments": OUTSIDE[1]}, modern=False)
    headers = {
        "Accept": wire.ACCEPT,
        "Content-Type": "application/json",
        "Authorization": f"Bearer {ledger_only}",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": wire.LEGACY,
    }

    refused = post(mcp_url(), wire.encode(message), headers, chunked=chunked)

    assert refused.status_code == 403 and refused.headers["www-authenticate"] == STEP_UP_CASES


def _receive(*messages: dict):
    pending = list(messages)

    async def receive() -> dict:
        return pending.pop(0)

    return receive


def _part(body: bytes, more: bool) -> dict:
    return {"type": "http.request", "body": body, "more_body": more}


def test_peek_body_joins_the_chunks_and_keeps_them_to_replay():
    parts = [_part(b'{"jsonrpc": ', True), _part(b'"2.0"', True), _part(b"}", False)]

    read, body = anyio.run(peek_body, _receive(*parts), 1024)

    assert body == b'{"jsonrpc": "2.0"}' and read == parts


def test_peek_body_stops_past_the_limit_and_at_a_disconnect():
    over = [_part(b"x" * 600, True), _part(b"x" * 600, True), _part(b"never read", False)]
    read, body = anyio.run(peek_body, _receive(*over), 1000)
    assert body is None and len(read) == 2  # bounded: no more than the limit and one chunk

    gone = [_part(b"{", True), {"type": "http.disconnect"}]
    read, body = anyio.run(peek_body, _receive(*gone), 1000)
    assert body is None and read == gone
