"""Every place the gateway relies on private MCP SDK API, in one module, each with a test.

The SDK (pinned ``mcp>=2.3,<2.4``) has no public hook for these; ``tests/mcp_gateway/
test_sdk_seams.py`` fails if an upgrade moves one, and says which. It lives at the gateway's root,
beside ``exceptions``, so every layer can use it. Besides the functions here, the transport
subclasses three private SDK methods (``streaming.StreamChoosingTransport._handle_post_request``,
``StreamChoosingManager._admit_session`` and ``_handle_request``: the JSON-or-stream choice per
POST, which the SDK has no hook for); the same test checks they still exist.
"""

from __future__ import annotations

import contextvars
from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware  # the SDK exports no name for its own middleware
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "OpenTelemetryMiddleware",
    "initialize_accepted",
    "sender_context",
    "session_connection",
    "session_transports",
]


def session_connection(session: Any) -> Any | None:
    """The per-client connection a handshake-era ``ServerSession`` serves: one per session, so a
    key for what the gateway remembers of it (the SDK keeps no public handle)."""
    return getattr(session, "_connection", None)


def initialize_accepted(session: Any) -> bool:
    """Whether the session's ``initialize`` was answered (the SDK checks it before a handler runs)."""
    connection = session_connection(session)
    return bool(connection is not None and connection.initialize_accepted)


def session_transports(manager: StreamableHTTPSessionManager) -> dict[str, StreamableHTTPServerTransport]:
    """The manager's open sessions by id: the SDK drops a session from this table the moment it
    ends (client DELETE, idle timeout, crash) and has no public hook for that end."""
    return manager._server_instances


def sender_context(transport: StreamableHTTPServerTransport) -> contextvars.Context | None:
    """The context of whoever sent the message a session's router is delivering (the handler of
    the request it belongs to), where no POST's context is current."""
    reader = transport._write_stream_reader
    return reader.last_context if reader is not None else None
