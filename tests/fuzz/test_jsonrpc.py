"""Hostile JSON-RPC on the wire of a live gateway: every answer clean, the server serving after each case."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import strategies as fz
from tests.fuzz.bar import assert_clean_answer, assert_still_serving
from tests.fuzz.profile import fuzz_settings
from tests.support import mcp_wire as wire

pytestmark = pytest.mark.slow


def send(served, body: bytes, headers: dict[str, str]) -> None:
    response = wire.post(served.mcp_url, body, headers)
    assert_clean_answer(response, body)
    assert_still_serving(served.platform, served.mcp_url, served.tokens["reader"])


@fuzz_settings(max_examples=60)
@given(message=fz.messages, who=st.sampled_from(["root", "member", "readonly"]))
def test_any_json_rpc_message_gets_a_clean_answer(served, message, who):
    send(served, wire.encode(message), wire.modern_headers(served.tokens[who], message))


@fuzz_settings(max_examples=30)
@given(body=fz.batches | fz.json_values)
def test_batches_and_bare_json_values_get_a_clean_answer(served, body):
    send(served, wire.encode(body), wire.modern_headers(served.tokens["root"], body))


@fuzz_settings(max_examples=30)
@given(
    body=st.one_of(
        st.binary(max_size=300),
        fz.deeply_nested,
        st.builds(lambda m, cut: wire.encode(m)[:cut], fz.messages, st.integers(0, 200)),
        st.sampled_from(
            [b"", b"\xff\xfe\x00", b"\xef\xbb\xbf{}", b"{" * 100_000, b"[1,2", b'{"jsonrpc":"2.0"']
        ),
    )
)
def test_bytes_that_are_not_a_message_get_a_clean_answer(served, body):
    send(served, body, wire.modern_headers(served.tokens["root"], None))


@fuzz_settings(max_examples=60)
@given(
    data=st.data(),
    message=st.sampled_from(
        [
            wire.request("tools/list"),
            wire.request("tools/call", {"name": "acme_cases_echo", "arguments": {"thing": "x"}}),
            wire.request("ping"),
            wire.request(
                "initialize",
                {
                    "protocolVersion": wire.LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "f", "version": "1"},
                },
                modern=False,
            ),
        ]
    ),
)
def test_any_headers_and_protocol_versions_get_a_clean_answer(served, data, message):
    candidates = {
        "Content-Type": fz.content_types,
        "Accept": fz.accepts,
        "MCP-Protocol-Version": fz.protocol_versions,
        "Mcp-Session-Id": fz.session_ids,
        "Authorization": fz.authorizations(served.tokens),
        "Mcp-Method": st.sampled_from([None, "tools/list", "tools/call", "ping"]),
        "Mcp-Name": st.sampled_from([None, "acme_cases_echo", "acme_nope", ""]),
        "Origin": st.sampled_from([None, "http://127.0.0.1", "null", "http://evil.example"]),
    }
    headers = {name: data.draw(values, label=name) for name, values in candidates.items()}
    send(served, wire.encode(message), {k: v for k, v in headers.items() if v is not None})


@fuzz_settings(max_examples=30)
@given(cursor=fz.cursors, who=st.sampled_from(["root", "member"]))
def test_any_cursor_gets_a_clean_answer(served, cursor, who):
    message = wire.request("tools/list", {"cursor": cursor})
    send(served, wire.encode(message), wire.modern_headers(served.tokens[who], message))


@pytest.fixture(scope="module")
def legacy_session(served) -> str:
    return wire.open_legacy_session(served.mcp_url, served.tokens["writer"])


@fuzz_settings(max_examples=40)
@given(message=fz.messages | fz.batches)
def test_a_legacy_session_answers_any_message_cleanly(served, legacy_session, message):
    headers = {
        "Accept": wire.ACCEPT,
        "Content-Type": "application/json",
        "Authorization": f"Bearer {served.tokens['writer']}",
        "Mcp-Session-Id": legacy_session,
        "MCP-Protocol-Version": wire.LEGACY,
    }
    send(served, wire.encode(message), headers)


@fuzz_settings(max_examples=20)
@given(
    method=st.sampled_from(["GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE"]),
    session=fz.session_ids,
    body=st.binary(max_size=50),
)
def test_other_http_methods_get_a_clean_answer(served, method, session, body):
    headers = {"Authorization": f"Bearer {served.tokens['root']}", "Accept": wire.ACCEPT}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    response = wire.client().request(method, served.mcp_url, content=body, headers=headers)
    assert_clean_answer(response, body)
    assert_still_serving(served.platform, served.mcp_url, served.tokens["reader"])
