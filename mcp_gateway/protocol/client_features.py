"""Server middleware: what the request's client can show, for the tool core (``tools.client_features``).

Set once per request from the capabilities the SDK recorded: the ``initialize`` ones of a
2025-11-25 session, or the request's own ``_meta`` ones on 2026-07-28.
"""

from __future__ import annotations

from typing import Any

from mcp.server import ServerRequestContext

from mcp_gateway.tools.client_features import shows_ui, ui_host


class ClientFeatures:
    """Middleware: ``ui_host`` is true while serving a request of a client that shows MCP Apps views."""

    async def __call__(self, ctx: ServerRequestContext, call_next: Any) -> Any:
        session = getattr(ctx, "session", None)
        token = ui_host.set(shows_ui(session.client_capabilities if session is not None else None))
        try:
            return await call_next(ctx)
        finally:
            ui_host.reset(token)
