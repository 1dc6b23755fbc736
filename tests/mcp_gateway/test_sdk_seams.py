"""``mcp_gateway.sdk_seams``: each private SDK touch still finds what it relies on (mcp 2.3)."""

from __future__ import annotations

import inspect

import anyio
import mcp.types as types
from mcp import Client
from mcp.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared._context_streams import ContextReceiveStream

from mcp_gateway import sdk_seams
from mcp_gateway.transport.streaming import StreamChoosingManager, StreamChoosingTransport


def test_the_sdk_still_wraps_every_message_in_its_opentelemetry_middleware():
    server = Server("seams")
    assert any(isinstance(m, sdk_seams.OpenTelemetryMiddleware) for m in server.middleware)


def test_a_handshake_era_session_has_one_connection_whose_initialize_is_seen():
    seen = []

    async def list_tools(ctx, params):
        seen.append((sdk_seams.session_connection(ctx.session), sdk_seams.initialize_accepted(ctx.session)))
        return types.ListToolsResult(tools=[])

    async def main():
        async with Client(Server("seams", on_list_tools=list_tools), mode="legacy") as client:
            await client.list_tools()
            await client.list_tools()

    anyio.run(main)
    (first, accepted), (second, _) = seen
    assert first is not None and first is second  # one key per session
    assert accepted is True
    assert sdk_seams.initialize_accepted(object()) is False  # anything else: not a session


def test_the_session_table_and_the_routers_sender_are_where_the_seams_read_them():
    manager = StreamableHTTPSessionManager(app=Server("seams"))
    assert sdk_seams.session_transports(manager) == {}
    assert "self._server_instances[" in inspect.getsource(StreamableHTTPSessionManager)
    transport = StreamableHTTPServerTransport(mcp_session_id=None)
    assert sdk_seams.sender_context(transport) is None  # no session started: no router yet
    # The router reads a ContextReceiveStream, which keeps each message's sender context.
    assert "_write_stream_reader: ContextReceiveStream" in inspect.getsource(StreamableHTTPServerTransport)
    assert "self.last_context" in inspect.getsource(ContextReceiveStream)


def test_the_private_methods_the_transport_overrides_still_exist_with_their_signatures():
    for ours, theirs, name in (
        (StreamChoosingTransport, StreamableHTTPServerTransport, "_handle_post_request"),
        (StreamChoosingManager, StreamableHTTPSessionManager, "_admit_session"),
        (StreamChoosingManager, StreamableHTTPSessionManager, "_handle_request"),
    ):
        assert name in vars(theirs), name
        assert list(inspect.signature(vars(ours)[name]).parameters) == list(
            inspect.signature(vars(theirs)[name]).parameters
        ), name
