"""The ASGI app of ``/t/<tenant>/builder/mcp``: Host and Origin checks, the admin's bearer token, then
the SDK's Streamable HTTP transport (stateless, JSON answers: every builder call is one request)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.types import Message, Receive, Scope, Send

from builder.auth import admin_request
from builder.exceptions import BuilderRefused
from builder.server import BUILDER_SCOPE_KEY, build_server
from builder.threads import in_thread
from core.challenges import bearer_challenge
from core.origin import SLUG_PATTERN, scope_origin
from mcp_gateway.transport.app import transport_security
from mcp_gateway.transport.headers import HeaderView, header
from mcp_gateway.transport.responses import send_error

BUILDER_PATH = re.compile(rf"^/t/(?P<slug>{SLUG_PATTERN})/builder/mcp$")


class BuilderEndpoint:
    """The builder's MCP endpoint for tenant admins, beside the gateway in ``lowcode_platform.asgi``."""

    def __init__(self) -> None:
        self.guard = TransportSecurityMiddleware(transport_security())
        self.sessions = StreamableHTTPSessionManager(
            app=build_server(), stateless=True, json_response=True, security_settings=self.guard.settings
        )

    def handles(self, path: str) -> bool:
        return bool(BUILDER_PATH.match(path.removesuffix("/")))

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        seen = HeaderView(scope, b"host", b"origin")
        refusal = await self.guard.validate_request(seen.as_request(), is_post=False)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        slug = BUILDER_PATH.match(scope["path"].removesuffix("/"))["slug"]
        authorization = header(scope, b"authorization")
        try:
            found = await in_thread(admin_request, slug, authorization, scope_origin(scope))
        except BuilderRefused as refused:
            headers = []
            if refused.status == 401:
                challenge = bearer_challenge(error="invalid_token", error_description=refused.message)
                headers.append((b"www-authenticate", challenge.encode()))
            await send_error(send, refused.status, refused.message, headers=headers)
            return
        body = await _read_body(receive, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        if body is None:
            message = f"the request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"
            await send_error(send, 413, message)
            return
        await self.sessions.handle_request({**scope, BUILDER_SCOPE_KEY: found}, _replay(body), send)


async def _read_body(receive: Receive, cap: int) -> bytes | None:
    """The request's body, or None once it passes ``cap`` bytes (the SDK's transport reads a body whole,
    with no bound of its own: an admin's token could otherwise fill the replica's memory)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive
