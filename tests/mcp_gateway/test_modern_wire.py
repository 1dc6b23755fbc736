"""The 2026-07-28 wire over plain HTTP: what the revision says of GET and DELETE, and of the headers."""

from __future__ import annotations

import httpx2
import pytest

MODERN = "2026-07-28"


@pytest.fixture
def endpoint(mcp_url, acme, make_token):
    return mcp_url(), {"Authorization": f"Bearer {make_token(acme, 'member')[1]}"}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_for_a_2026_client(endpoint, method):
    url, headers = endpoint
    response = httpx2.request(method, url, headers={**headers, "MCP-Protocol-Version": MODERN})

    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def test_a_method_header_that_does_not_match_the_body_is_32020(endpoint):
    url, headers = endpoint
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    response = httpx2.post(
        url,
        headers={
            **headers,
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}},
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020 and response.json()["id"] == 7
