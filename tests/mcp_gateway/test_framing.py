"""Answers to POSTs are single JSON bodies, except for calls that need a stream (progress, elicitation)."""

from __future__ import annotations

import httpx2

from tests.support import mcp_wire as wire


def test_a_tool_call_is_answered_with_one_json_body_even_to_a_client_that_accepts_only_json(
    mcp_url, acme, deploy, make_token
):
    deploy(acme)
    token = make_token(acme, "reader")[1]
    message = wire.request("tools/call", {"name": "acme_cases_find_case", "arguments": {"query": "ab"}})
    headers = {**wire.modern_headers(token, message), "Accept": "application/json"}

    response = httpx2.post(mcp_url(), content=wire.encode(message), headers=headers, timeout=30)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["isError"] is False


def _legacy_headers(url: str, token: str) -> dict[str, str]:
    return {
        "Accept": wire.ACCEPT,
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": wire.open_legacy_session(url, token),
        "MCP-Protocol-Version": wire.LEGACY,
    }


def test_a_handshake_era_session_gets_json_answers(mcp_url, acme, make_token):
    token = make_token(acme, "reader")[1]
    headers = _legacy_headers(mcp_url(), token)

    response = httpx2.post(
        mcp_url(), content=wire.encode(wire.request("tools/list", modern=False)), headers=headers, timeout=30
    )

    assert response.headers["content-type"].startswith("application/json")
    assert "acme_records_query" in [tool["name"] for tool in response.json()["result"]["tools"]]


def test_a_handshake_era_call_that_asked_for_progress_gets_an_event_stream(mcp_url, acme, deploy, make_token):
    deploy(acme)
    token = make_token(acme, "reader")[1]
    headers = _legacy_headers(mcp_url(), token)
    arguments = {"query": "ab"}
    plain = wire.request("tools/call", {"name": "acme_cases_find_case", "arguments": arguments}, modern=False)
    asked = wire.request("tools/call", {"name": "acme_cases_find_case", "arguments": arguments}, modern=False)
    asked["params"]["_meta"] = {"progressToken": "p1"}

    plain_answer = httpx2.post(mcp_url(), content=wire.encode(plain), headers=headers, timeout=30)
    asked_answer = httpx2.post(mcp_url(), content=wire.encode(asked), headers=headers, timeout=30)

    assert plain_answer.headers["content-type"].startswith("application/json")
    assert asked_answer.headers["content-type"].startswith("text/event-stream")
    assert wire.messages_in(asked_answer)[-1]["result"]["isError"] is False
