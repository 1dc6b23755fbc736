"""The HTTP side of the gateway: auth in front of the SDK's Streamable HTTP transport.

The only module that touches Starlette and the transport. The tenant comes from the path
``/t/<tenant>/mcp``; the caller from ``Authorization: Bearer``. Each session is bound to the
token that opened it (the SDK compares ``scope["user"]``), so another credential cannot ride it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator

import anyio
from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.types import Receive, Scope, Send

from mcp_gateway.auth import GATEWAY_SCOPE_KEY, GatewayRequest, authenticate, current_request
from mcp_gateway.catalog import catalog_for
from mcp_gateway.concurrency import in_thread
from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.notifications import Notifier
from mcp_gateway.server import build_server

logger = logging.getLogger("mcp_gateway.http")

MCP_PATH = re.compile(r"^/t/(?P<slug>[a-z0-9][a-z0-9-]{0,39})/mcp/?$")
PRM_PATH = re.compile(r"^/\.well-known/oauth-protected-resource/t/(?P<slug>[a-z0-9][a-z0-9-]{0,39})/mcp/?$")


def transport_security() -> TransportSecuritySettings:
    """Host and Origin checks (DNS-rebinding protection) from ALLOWED_HOSTS and MCP_ALLOWED_ORIGINS."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        logger.warning("ALLOWED_HOSTS contains '*': MCP Host/Origin checks are off")
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed_hosts = [h for host in hosts for h in (host, f"{host}:*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=list(settings.MCP_ALLOWED_ORIGINS),
    )


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


def _base_url(scope: Scope) -> str:
    host = _header(scope, b"host") or "localhost"
    return f"{scope.get('scheme', 'http')}://{host}"


async def _send_json(send: Send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
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


class Gateway:
    """The ASGI app for /t/<tenant>/mcp and its protected-resource metadata."""

    def __init__(self) -> None:
        self.notifier = Notifier()
        self.server = build_server(self.notifier)
        self.sessions = StreamableHTTPSessionManager(
            app=self.server,
            stateless=settings.MCP_STATELESS,
            security_settings=transport_security(),
        )

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.sessions.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(self.notifier.run)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    def handles(self, path: str) -> bool:
        return bool(MCP_PATH.match(path) or PRM_PATH.match(path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        prm = PRM_PATH.match(scope["path"])
        if prm:
            await self._metadata(scope, send, prm["slug"])
            return
        slug = MCP_PATH.match(scope["path"])["slug"]
        try:
            gw = await in_thread(authenticate, slug, _header(scope, b"authorization"))
        except GatewayRefused as refused:
            await self._refuse(scope, send, slug, refused)
            return
        # The 2026 transport asks for a tool's inputSchema before dispatch, synchronously.
        current_request.set(gw)
        await in_thread(catalog_for, gw.tenant)
        await self.sessions.handle_request(self._authenticated_scope(scope, gw), receive, send)

    @staticmethod
    def _authenticated_scope(scope: Scope, gw: GatewayRequest) -> Scope:
        caller = gw.caller
        principal = AccessToken(
            token=f"token:{caller.token_id}",
            client_id=f"tenant:{gw.tenant.pk}",
            subject=f"token:{caller.token_id}",
            scopes=[],
        )
        return {
            **scope,
            "user": AuthenticatedUser(principal),
            "auth": AuthCredentials([]),
            GATEWAY_SCOPE_KEY: gw,
        }

    async def _refuse(self, scope: Scope, send: Send, slug: str, refused: GatewayRefused) -> None:
        headers = []
        if refused.status == 401:
            metadata = f"{_base_url(scope)}/.well-known/oauth-protected-resource/t/{slug}/mcp"
            challenge = (
                f'Bearer error="invalid_token", error_description="{refused.message}", '
                f'resource_metadata="{metadata}"'
            )
            headers.append((b"www-authenticate", challenge.encode()))
        await _send_json(send, refused.status, {"error": refused.message}, headers)

    async def _metadata(self, scope: Scope, send: Send, slug: str) -> None:
        """RFC 9728 protected-resource metadata: bearer tokens in the header, issued by the platform."""
        base = _base_url(scope)
        await _send_json(
            send,
            200,
            {
                "resource": f"{base}/t/{slug}/mcp",
                "bearer_methods_supported": ["header"],
                "resource_name": f"MCP endpoint of tenant {slug}",
                "resource_documentation": f"{base}/api/schema/",
            },
            [(b"cache-control", b"public, max-age=3600"), (b"access-control-allow-origin", b"*")],
        )
