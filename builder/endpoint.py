"""The ASGI app of ``/t/<tenant>/builder/mcp``: Host and Origin checks, the admin's bearer token, then
the SDK's Streamable HTTP transport (stateless, JSON answers: every builder call is one request)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.types import Receive, Scope, Send

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
        refusal = await self.guard.validate_request(HeaderView(scope, b"host", b"origin"), is_post=False)
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
        await self.sessions.handle_request({**scope, BUILDER_SCOPE_KEY: found}, receive, send)
