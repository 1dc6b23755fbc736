"""The HTTP side of the gateway: auth in front of the SDK's Streamable HTTP transport.

With ``endpoint_auth`` (the SDK's auth seams) and ``streaming``, the only module that touches
Starlette and the transport. The tenant comes from the path ``/t/<tenant>/mcp``; the caller from
``Authorization: Bearer``. Each session is bound to the token that opened it (the SDK compares
``scope["user"]``), so another credential cannot ride it.

Order of checks: Host (and, for the endpoint, Origin) first, with the transport's own rule, so
nothing a client sends in ``Host`` is reflected into an answer; then the tenant; then the token;
then the per-token and per-tenant session caps; then the SDK.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator

import anyio
from django.conf import settings
from django.db import DatabaseError
from django.http.request import split_domain_port
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from core.error_ids import error_id_note, new_error_id
from core.origin import MCP_PATH, METADATA_PATH, scope_origin
from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.limits.owner_caps import Owner
from mcp_gateway.protocol.concurrency import SERVER_BUSY, share_limits
from mcp_gateway.protocol.context import GatewayRequest, scope_caller, serving
from mcp_gateway.protocol.notifications import Notifier
from mcp_gateway.protocol.server import build_server
from mcp_gateway.protocol.stream_choice import warm_catalog
from mcp_gateway.sdk_seams import session_transports
from mcp_gateway.transport.auth import RequireCaller, authenticate
from mcp_gateway.transport.headers import SESSION_HEADER, HeaderView, header
from mcp_gateway.transport.metadata import serve_metadata
from mcp_gateway.transport.responses import send_error, send_jsonrpc_error
from mcp_gateway.transport.sessions import Reservation, SessionLedger, TooManySessions, session_limits
from mcp_gateway.transport.streaming import StreamChoosingManager, gateway_wants_stream

logger = logging.getLogger("mcp_gateway.transport.app")


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


class Gateway:
    """The ASGI app for /t/<tenant>/mcp and its protected-resource metadata (``metadata``); every
    answer it gives itself is written by ``responses``."""

    def __init__(self) -> None:
        share_limits()  # a misconfigured limit stops the server at start-up, not at the first call
        self.notifier = Notifier()
        self.server = build_server(self.notifier)
        self.guard = TransportSecurityMiddleware(transport_security())
        self.sessions = StreamChoosingManager(
            app=self.server,
            stateless=settings.MCP_STATELESS,
            # One JSON body per POST, except for calls that need an event stream (progress,
            # elicitation): see ``streaming``. list_changed goes on the session's GET stream.
            json_response=settings.MCP_JSON_RESPONSES,
            chooser=gateway_wants_stream,
            security_settings=self.guard.settings,
            session_idle_timeout=session_limits().idle_s,
        )
        self.ledger = SessionLedger(self)

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.sessions.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(self.notifier.run)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    def handles(self, path: str) -> bool:
        path = path.removesuffix("/")  # both are served with a trailing slash too
        return bool(MCP_PATH.match(path) or METADATA_PATH.match(path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._handle(scope, receive, tracking_send)
        except DatabaseError:
            # Auth and metadata read the database before the SDK takes over; while it is down
            # (a restart, a failover) the caller gets a retryable 503 with an error id, never a
            # bare 500. Past that point the server's handlers turn faults into -32603 themselves.
            if started:
                raise
            error_id = new_error_id()
            logger.exception("MCP request failed: database unavailable (error id %s)", error_id)
            message = f"The platform is briefly unavailable; retry {error_id_note(error_id)}."
            await send_error(send, 503, message, error_id=error_id, headers=[(b"retry-after", b"5")])

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].removesuffix("/")
        prm = METADATA_PATH.match(path)
        # Browsers fetch the metadata cross-origin (it allows any Origin): only its Host is checked.
        refusal = await self._host_refusal(scope, check_origin=not prm)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if prm:
            await serve_metadata(scope, send, prm["slug"])
            return
        endpoint = MCP_PATH.match(path)
        if endpoint is None:  # ``handles`` let in only the metadata and the endpoint
            raise ValueError(f"not a gateway path: {path[:200]!r}")
        slug = endpoint["slug"]
        origin = scope_origin(scope)
        try:
            scope = await authenticate(scope, slug, origin)
        except GatewayRefused as refused:
            await send_error(send, refused.status, refused.message)
            return
        await RequireCaller(self._serve_caller, scope, origin, slug)(scope, receive, send)

    async def _serve_caller(self, scope: Scope, receive: Receive, send: Send) -> None:
        gw = scope_caller(scope)
        if gw is None:  # RequireCaller lets only an authenticated request through
            raise ValueError("the gateway was reached without a caller")
        with serving(gw):
            await self._serve(scope, receive, send, gw)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, gw: GatewayRequest) -> None:
        version = header(scope, b"mcp-protocol-version")
        modern = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS  # the SDK's routing
        if modern:
            # The 2026 transport asks for a tool's inputSchema before dispatch, synchronously;
            # without the catalog it only skips its Mcp-Param header check.
            await warm_catalog(gw.tenant)
        if modern or self.sessions.stateless or header(scope, SESSION_HEADER) is not None:
            await self.sessions.handle_request(scope, receive, send)
            return
        limits = session_limits()
        try:
            reservation = self.ledger.reserve(gw.tenant.pk, Owner.of(gw.caller), limits)
        except TooManySessions as refused:
            await _too_many_sessions(send, gw, refused)
            return
        # The manager reads its idle timeout when it opens a session: keep it at the current setting.
        self.sessions.session_idle_timeout = limits.idle_s
        try:
            await self.sessions.handle_request(scope, receive, self._recording(send, reservation))
        finally:
            self.ledger.release(reservation)

    def _recording(self, send: Send, reservation: Reservation) -> Send:
        """``send`` that counts the session the SDK opens, before the client can learn its id."""

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = dict(message.get("headers", [])).get(SESSION_HEADER)
                if session_id is not None:
                    self.ledger.opened(reservation, session_id.decode("latin-1"))
            await send(message)

        return recording_send

    def open_sessions(self) -> int:
        """Sessions this process holds open (a reading for the metrics)."""
        return len(session_transports(self.sessions))

    # The ledger's ``SessionProbe``. The SDK has no public hook for a session's end (client DELETE,
    # idle timeout, crash); it drops the session from this table the moment it ends, so the ledger
    # asks it. A session's transport holds its idle countdown in ``idle_scope``: an infinite
    # deadline while a request (or a GET stream) is in flight, else the moment it will be reaped.

    def is_open(self, session_id: str) -> bool:
        return session_id in session_transports(self.sessions)

    def idle_until(self, session_id: str) -> float | None:
        transport = session_transports(self.sessions).get(session_id)
        scope = transport.idle_scope if transport is not None else None
        if scope is None or scope.cancel_called or not math.isfinite(scope.deadline):
            return None
        return scope.deadline

    def end(self, session_id: str) -> None:
        transport = session_transports(self.sessions).get(session_id)
        if transport is not None and transport.idle_scope is not None:
            logger.info("session %s ended to make room for a new one of its owner", session_id[:12])
            # What the idle timeout does: the session's loop ends and the SDK discards it; a
            # request reaching it meanwhile is answered as for a terminated session.
            transport.idle_scope.cancel()

    async def _host_refusal(self, scope: Scope, *, check_origin: bool) -> Response | None:
        """421 for a Host outside ALLOWED_HOSTS, 403 for a foreign Origin: the transport's own checks."""
        seen = HeaderView(scope, b"host", b"origin") if check_origin else HeaderView(scope, b"host")
        host = seen.headers.get("host")
        if host is not None and not split_domain_port(host)[0]:
            return Response("Invalid Host header", status_code=400)
        return await self.guard.validate_request(seen.as_request(), is_post=False)


async def _too_many_sessions(send: Send, gw: GatewayRequest, refused: TooManySessions) -> None:
    error_id = new_error_id()
    logger.warning(
        "tenant %s: session refused, %s cap of %s reached (%s)",
        gw.tenant.pk,
        refused.scope,
        refused.limit,
        error_id,
    )
    retry_after = refused.retry_after  # when the first session that counts here is reaped
    await send_jsonrpc_error(
        send,
        429,
        SERVER_BUSY,
        f"{refused} Close unused sessions (HTTP DELETE) or retry later {error_id_note(error_id)}.",
        {"errorId": error_id, "limit": refused.scope, "retryAfter": retry_after},
        [(b"retry-after", str(retry_after).encode())],
    )
