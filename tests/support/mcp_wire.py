"""Raw MCP over HTTP, as a hostile client would send it: no SDK between the fuzzer and the wire."""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx2

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
TIMEOUT = httpx2.Timeout(20.0)


def modern_meta() -> dict:
    """The ``_meta`` envelope a 2026-07-28 client puts in every request's params."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def modern_headers(token: str | None, message: Any) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with ``message`` (the method and tool name mirrored)."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if isinstance(message, dict):
        method = message.get("method")
        if _header_safe(method):
            headers["Mcp-Method"] = method
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if _header_safe(name):
            headers["Mcp-Name"] = name
    return headers


def _header_safe(value: Any) -> bool:
    """Whether an HTTP client can send ``value`` as a header value at all (else the header is left out)."""
    return isinstance(value, str) and value.isascii() and value.isprintable() and value == value.strip()


def request(method: str, params: dict | None = None, *, id: Any = 1, modern: bool = True) -> dict:
    """A well-formed JSON-RPC request (with the modern ``_meta`` envelope unless ``modern`` is false)."""
    params = dict(params or {})
    if modern:
        params["_meta"] = modern_meta()
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def legacy_initialize(client: str = "test") -> dict:
    """The ``initialize`` request a handshake-era (2025-11-25) client opens its session with."""
    return request(
        "initialize",
        {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
        modern=False,
    )


def encode(message: Any) -> bytes:
    """JSON as a client library would send it (big integers, lone surrogates as escapes, and all)."""
    return json.dumps(message).encode()


@functools.cache
def client(purpose: str = "fuzz") -> httpx2.Client:
    """One keep-alive client per purpose: a new client costs ~100 ms (its TLS context) on every call.

    Checks use their own ("check"), so a connection a hostile request left odd never fails a check.
    """
    return httpx2.Client(timeout=TIMEOUT)


def post(url: str, body: bytes, headers: dict[str, str], *, purpose: str = "fuzz") -> httpx2.Response:
    return client(purpose).post(url, content=body, headers=headers)


def messages_in(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages of an answer, from a JSON body or from ``data:`` lines of an event stream."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        chunks = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    else:
        chunks = [text]
    found = []
    for chunk in chunks:
        try:
            value = json.loads(chunk)
        except ValueError:
            continue
        found.extend(value if isinstance(value, list) else [value])
    return found


def call_tool(url: str, token: str, name: str, arguments: Any, *, id: Any = 1) -> httpx2.Response:
    """A 2026-07-28 ``tools/call`` (stateless: no session to open first)."""
    message = request("tools/call", {"name": name, "arguments": arguments}, id=id)
    return post(url, encode(message), modern_headers(token, message))


def tool_names(url: str, token: str) -> list[str]:
    """Every tool the token's caller sees, all pages."""
    names, cursor = [], None
    while True:
        message = request("tools/list", {"cursor": cursor} if cursor else {})
        response = post(url, encode(message), modern_headers(token, message), purpose="check")
        if response.status_code != 200:
            return names
        result = messages_in(response)[0]["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return names


def tool_schemas(url: str, token: str) -> dict[str, dict]:
    message = request("tools/list")
    response = post(url, encode(message), modern_headers(token, message), purpose="check")
    return {tool["name"]: tool["inputSchema"] for tool in messages_in(response)[0]["result"]["tools"]}


def open_legacy_session(url: str, token: str) -> str:
    """``initialize`` and ``notifications/initialized`` on the 2025 transport; returns the session id."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    response = post(url, encode(legacy_initialize("fuzz")), headers, purpose="check")
    response.raise_for_status()
    session = response.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    post(
        url,
        encode(done),
        {**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY},
        purpose="check",
    )
    return session
