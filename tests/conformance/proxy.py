"""The suite's way in: an ASGI proxy that adds the fixture token and maps two names the platform cannot serve.

The conformance suite sends no ``Authorization`` header in server mode, and the gateway serves no
caller without one; this proxy adds the fixture member's bearer token to every request and passes
everything else (method, path, the suite's own ``Host`` and ``Origin``, the body) through, streaming
the answer back as it comes (event streams included).

Two of the suite's fixed tool names have a single ``_`` (``test_sampling``, ``test_elicitation``),
and the tasks-* scenarios' names have none or one (``greet``, ``slow_compute``), while a wire name
is always ``<prefix>_<app>_<tool>``; the proxy renames them to the fixture's
``test_sampling_create`` / ``test_elicitation_create`` / ``test_tasks_<name>`` on the way in and
back on the way out, rather than the platform weakening its wire-name rule for a test. The suite's
resource URIs (``test://static-text``) need no mapping: an app's resources live under its own
scheme, and they are the fixture app ``test``'s.
"""

from __future__ import annotations

import contextlib
import json

import httpx2

RENAMED = {"test_sampling": "test_sampling_create", "test_elicitation": "test_elicitation_create"}
# The tasks-* scenarios' fixtures have bare names (``greet``, ``slow_compute``): app ``tasks`` serves them.
RENAMED.update(
    {
        name: f"test_tasks_{name}"
        for name in (
            "greet",
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
        )
    }
)
_BACK = [(f'"{wire}"'.encode(), f'"{suite}"'.encode()) for suite, wire in RENAMED.items()]
_HOP_BY_HOP = {b"host", b"content-length", b"connection", b"transfer-encoding", b"authorization"}


def renamed_request(body: bytes) -> bytes:
    """The body with a renamed tool's name (``params.name`` of a call) mapped to its wire name."""
    try:
        message = json.loads(body)
    except ValueError:
        return body
    params = message.get("params") if isinstance(message, dict) else None
    if isinstance(params, dict) and params.get("name") in RENAMED:
        params["name"] = RENAMED[params["name"]]
    return json.dumps(message).encode()


def renamed_header(value: str) -> str:
    """An ``Mcp-Name`` header value (a tool name or a resource URI) as the platform knows it."""
    value = value.strip()
    return RENAMED.get(value) or value


def renamed_response(chunk: bytes) -> bytes:
    for wire, suite in _BACK:
        chunk = chunk.replace(wire, suite)
    return chunk


class AuthProxy:
    """ASGI app: every request to ``upstream`` with ``Authorization: Bearer <token>`` added."""

    def __init__(self, upstream: str, token: str):
        self.upstream = upstream.rstrip("/")
        self.token = token
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=None))

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(b"authorization", f"Bearer {self.token}".encode())]
        for key, value in scope["headers"]:
            key = key.lower()
            if key == b"mcp-name":
                value = renamed_header(value.decode()).encode()
            if key not in _HOP_BY_HOP or key == b"host":  # the suite's own Host, for its DNS-rebinding checks
                headers.append((key, value))
        query = scope["query_string"].decode()
        url = self.upstream + scope["path"] + (f"?{query}" if query else "")
        request = self.client.build_request(
            scope["method"], url, headers=headers, content=renamed_request(body) if body else None
        )
        response = await self.client.send(request, stream=True)
        try:
            out = [(k.encode(), v.encode()) for k, v in response.headers.multi_items()]
            out = [(k, v) for k, v in out if k.lower() not in _HOP_BY_HOP]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            with contextlib.suppress(httpx2.HTTPError):  # the server ended a stream: so does the proxy
                async for chunk in response.aiter_raw():
                    message = {
                        "type": "http.response.body",
                        "body": renamed_response(chunk),
                        "more_body": True,
                    }
                    await send(message)
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()
