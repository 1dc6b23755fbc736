"""One JSON body per MCP POST, or an event stream for the POSTs that need one.

An event stream costs the transport ~1.2 ms of CPU a POST (#11), so answers are JSON bodies
(``MCP_JSON_RESPONSES``). But a JSON body carries only the answer: progress, log lines and a
server request tied to the call (elicitation) need the stream. So the choice is made per POST,
before the SDK reads it: a ``tools/call`` whose tool needs a stream (``needs_stream``) gets one
when the client's ``Accept`` allows ``text/event-stream``; everything else stays JSON.

The SDK reads its JSON-or-stream flag (``json_response`` on the manager, for the 2026-07-28 era
and stateless transports; ``is_json_response_enabled`` on a session's transport) at a few fixed
points. Here both flags answer from a context variable set for the POST being served. One of
those points runs in no POST's context: the session's message router, which drops a message tied
to a request when JSON is in force. There the flag answers for the message's sender instead (the
handler of that request, whose context the SDK's streams carry along). ``tests/mcp_gateway/
test_streaming.py`` fails if the SDK moves these points.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from mcp_gateway.protocol import log_levels
from mcp_gateway.protocol.asking import session_can_answer
from mcp_gateway.protocol.concurrency import TenantBusy, in_thread
from mcp_gateway.protocol.context import scope_caller, streamed_var
from mcp_gateway.tools.catalog import TenantCatalog, cached_catalog, catalog_for
from mcp_gateway.transport.headers import SESSION_HEADER, HeaderView, header
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("mcp_gateway.transport.streaming")


StreamChooser = Callable[[Scope, dict], Awaitable[bool]]


def progress_token(params: Any) -> str | int | None:
    """The ``_meta.progressToken`` of a request's params, if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def needs_stream(
    tenant: Tenant, caller: Caller, method: str, params: Any, session: str | None = None
) -> bool:
    """Whether answering this request needs an event stream: the one rule, extend it here.

    A ``tools/call`` that asked for progress or for log lines (a 2026-07-28 request's log level, or
    its handshake-era ``session``'s ``logging/setLevel``), or whose tool asks the user to confirm it
    first (elicitation travels on the call's stream), or an app tool called in a handshake-era
    session whose client answers questions (its handler may ask: ``asking``). Reads only the cached
    catalog: no I/O.
    """
    if method != "tools/call" or not isinstance(params, dict):
        return False
    if progress_token(params) is not None or wants_logs(params, session):
        return True
    name = params.get("name")
    if not isinstance(name, str):  # a list or an object is unhashable: the SDK refuses the call itself
        return False
    catalog = cached_catalog(tenant)
    entry = catalog.by_name.get(name) if catalog is not None else None
    if entry is None or not entry.visible_to(caller):
        return False
    return entry.confirm or (entry.builtin is None and session_can_answer(session))


async def warm_catalog(tenant: Tenant) -> TenantCatalog | None:
    """The tenant's catalog, built now if this process lacks it; None if the tenant is busy.

    Best effort: the call itself builds it anyway, or waits for the tenant's share, or is refused.
    """
    found = cached_catalog(tenant)
    if found is not None:
        return found
    try:
        return await in_thread(catalog_for, tenant)
    except TenantBusy:
        logger.debug("catalog warm-up skipped: tenant %s busy", tenant.pk)
        return None


async def gateway_wants_stream(scope: Scope, message: dict) -> bool:
    """``needs_stream`` for the authenticated caller of this POST (the gateway's chooser)."""
    gw = scope_caller(scope)
    if gw is None or message.get("method") != "tools/call":
        return False
    params, session = message.get("params"), header(scope, SESSION_HEADER)
    if progress_token(params) is None and not wants_logs(params, session):
        await warm_catalog(gw.tenant)  # so needs_stream finds the tool's options
    return needs_stream(gw.tenant, gw.caller, "tools/call", params, session)


def wants_logs(params: Any, session: str | None) -> bool:
    return log_levels.requested_level(params) is not None or log_levels.session_level(session) is not None


def _tool_call(body: bytes) -> dict | None:
    if b"tools/call" not in body:  # most POSTs: no parse
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK answers the parse error
    return message if isinstance(message, dict) else None


class StreamChoosingTransport(StreamableHTTPServerTransport):
    """A session's transport that answers each POST as ``streamed_var`` says (set by the manager)."""

    json_default: bool = True

    @property
    def is_json_response_enabled(self) -> bool:
        choice = streamed_var.get()
        if choice is None:  # the message router: the message's sender decides
            sender = self._write_stream_reader.last_context if self._write_stream_reader is not None else None
            choice = sender.get(streamed_var, None) if sender is not None else None
        return self.json_default and not choice

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        self.json_default = value

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        token = streamed_var.set(bool(streamed_var.get()))  # this POST decided: not the router
        try:
            await super()._handle_post_request(scope, request, receive, send)
        finally:
            streamed_var.reset(token)


class StreamChoosingManager(StreamableHTTPSessionManager):
    """The SDK's session manager, answering JSON unless ``chooser`` says a POST needs a stream."""

    def __init__(self, *args: Any, chooser: StreamChooser, **kwargs: Any) -> None:
        self._chooser = chooser
        self._json_default = True
        super().__init__(*args, **kwargs)

    @property
    def json_response(self) -> bool:
        return self._json_default and not streamed_var.get()

    @json_response.setter
    def json_response(self, value: bool) -> None:
        self._json_default = value

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:
            # The SDK builds its own class; this subclass adds behaviour only, no state to set up.
            transport.__class__ = StreamChoosingTransport
            transport.json_default = self._json_default
        return transport

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        # ``receive`` replays the body the SDK's size limit has already read in full.
        if not self._json_default or scope.get("method") != "POST":
            await super()._handle_request(scope, receive, send)
            return
        first = await receive()
        pending = [first]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        token = streamed_var.set(True) if await self._wants_stream(scope, first) else None
        try:
            await super()._handle_request(scope, replay, send)
        finally:
            if token is not None:
                streamed_var.reset(token)

    async def _wants_stream(self, scope: Scope, first: Message) -> bool:
        if first.get("type") != "http.request" or first.get("more_body"):
            return False
        message = _tool_call(first.get("body", b""))
        if message is None or not check_accept_headers(HeaderView(scope, b"accept"))[1]:
            return False  # not a call, or the client cannot read a stream
        return await self._chooser(scope, message)
