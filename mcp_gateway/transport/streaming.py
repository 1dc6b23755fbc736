"""One JSON body per MCP POST, or an event stream for the POSTs that need one.

An event stream costs the transport ~1.2 ms of CPU a POST (#11), so answers are JSON bodies
(``MCP_JSON_RESPONSES``). But a JSON body carries only the answer: progress, log lines and a
server request tied to the call (elicitation) need the stream. So the choice is made per POST,
before the SDK reads it: a ``tools/call`` whose tool needs a stream (the protocol layer's rule,
``protocol.stream_choice.needs_stream``) gets one when the client's ``Accept`` allows
``text/event-stream``; everything else stays JSON. The transport asks the protocol layer and never
reads the tool catalog itself.

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
from typing import Any, cast

from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from mcp_gateway.protocol.context import scope_caller, streamed_var
from mcp_gateway.protocol.step_up import missing_scope
from mcp_gateway.protocol.stream_choice import progress_token, wants_stream
from mcp_gateway.sdk_seams import sender_context
from mcp_gateway.transport.headers import SESSION_HEADER, HeaderView, header
from mcp_gateway.transport.responses import send_step_up

logger = logging.getLogger("mcp_gateway.transport.streaming")


StreamChooser = Callable[[Scope, dict], Awaitable[bool]]
__all__ = ["StreamChoosingManager", "gateway_wants_stream", "progress_token"]


async def gateway_wants_stream(scope: Scope, message: dict) -> bool:
    """The gateway's chooser: the protocol layer's rule (``wants_stream``) for this POST's caller
    and session."""
    return await wants_stream(scope_caller(scope), message, header(scope, SESSION_HEADER))


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
            sender = sender_context(self)
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
            # The class was just set: a cast, since mypy cannot see an object change its class.
            cast(StreamChoosingTransport, transport).json_default = self._json_default
        return transport

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await super()._handle_request(scope, receive, send)
            return
        read, body = await peek_body(receive, self.max_request_body_size)

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        needed = await self._missing_scope(scope, body)
        if needed is not None:
            message = f"This connection does not carry this tool: it needs the scope {needed}."
            await send_step_up(send, needed, message)
            return
        if not self._json_default:
            await super()._handle_request(scope, replay, send)
            return
        token = streamed_var.set(True) if await self._wants_stream(scope, body) else None
        try:
            await super()._handle_request(scope, replay, send)
        finally:
            if token is not None:
                streamed_var.reset(token)

    async def _missing_scope(self, scope: Scope, body: bytes | None) -> str | None:
        message = _tool_call(body) if body is not None else None
        return await missing_scope(scope_caller(scope), message) if message is not None else None

    async def _wants_stream(self, scope: Scope, body: bytes | None) -> bool:
        message = _tool_call(body) if body is not None else None
        if message is None or not check_accept_headers(HeaderView(scope, b"accept").as_request())[1]:
            return False  # not a call, or the client cannot read a stream
        return await self._chooser(scope, message)


async def peek_body(receive: Receive, limit: int) -> tuple[list[Message], bytes | None]:
    """The messages of a POST's body read ahead (to replay to the SDK as they came), and the body
    they make, however many chunks it came in; None when it is over ``limit`` bytes (the SDK's own
    limit, which answers 413) or the client went away first. Reads at most ``limit`` plus a chunk.

    The SDK's body limit middleware in front of the manager already joins the chunks into one
    message; this does not count on it, so a multi-chunk body is judged like a single-chunk one
    (the step-up, the stream choice) whatever the SDK does before it.
    """
    read: list[Message] = []
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message.get("type") != "http.request":
            return read, None
        size += len(message.get("body", b""))
        if size > limit:
            return read, None
        if not message.get("more_body"):
            return read, b"".join(part.get("body", b"") for part in read)
