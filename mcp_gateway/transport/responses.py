"""Every HTTP answer the MCP endpoint gives before the SDK takes over, in one place.

The endpoint's error body is ``{"error": message}`` (plus ``errorId`` when the cause was logged
under one), as docs/mcp.md promises for its 401, 404 and 503; a refused session is a JSON-RPC error
body, since the client is in the middle of ``initialize``. The 401's challenge is
``core.challenges.bearer_challenge``, as on the platform's other surfaces.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from starlette.types import Send

from core.challenges import bearer_challenge

Headers = Sequence[tuple[bytes, bytes]]


async def send_json(send: Send, status: int, body: dict, headers: Headers = ()) -> None:
    """An ASGI JSON answer."""
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def send_error(
    send: Send, status: int, message: str, *, error_id: str | None = None, headers: Headers = ()
) -> None:
    """The endpoint's error body: ``{"error": message}``, with ``errorId`` when there is one."""
    body = {"error": message} if error_id is None else {"error": message, "errorId": error_id}
    await send_json(send, status, body, headers)


async def send_step_up(send: Send, scope: str, message: str) -> None:
    """The MCP authorization spec's step-up: 403 ``insufficient_scope`` naming the ``scope`` a
    client asks the person for (a connection narrowed to other apps)."""
    challenge = bearer_challenge(error="insufficient_scope", scope=scope)
    await send_error(send, 403, message, headers=[(b"www-authenticate", challenge.encode())])


async def send_auth_error(
    send: Send, status: int, error: str, message: str, *, resource_metadata: str | None
) -> None:
    """A 401/403 with its ``WWW-Authenticate`` challenge (RFC 6750, RFC 9728) and the endpoint's body."""
    challenge = bearer_challenge(error=error, error_description=message, resource_metadata=resource_metadata)
    await send_error(send, status, message, headers=[(b"www-authenticate", challenge.encode())])


async def send_jsonrpc_error(
    send: Send, status: int, code: int, message: str, data: dict, headers: Headers = ()
) -> None:
    """A JSON-RPC error answered at the HTTP level (no request id: it was refused before dispatch)."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message, "data": data}}
    await send_json(send, status, body, headers)
