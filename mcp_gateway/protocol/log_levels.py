"""Which handler log lines a caller wants: ``logging/setLevel`` (handshake era) or the request's opt-in.

A handshake-era session sets its minimum level with ``logging/setLevel`` (kept here per session, in
this process, as the session itself is); until then it gets every level. A 2026-07-28 request opts
in with ``_meta["io.modelcontextprotocol/logLevel"]``; without it, it gets none (the spec's rule).
"""

from __future__ import annotations

from typing import TypeGuard

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from apps_runtime.handler_contract import LOG_LEVELS
from core.caches import BoundedCache

SESSION_HEADER = "mcp-session-id"
MAX_SESSIONS = 10_000  # levels remembered; the oldest set is forgotten first (it then gets every level)

_session_levels: BoundedCache[str, str] = BoundedCache(MAX_SESSIONS)


def session_id(ctx: ServerRequestContext) -> str | None:
    return ctx.request.headers.get(SESSION_HEADER) if ctx.request is not None else None


async def set_level(ctx: ServerRequestContext, params: types.SetLevelRequestParams) -> types.EmptyResult:
    """The ``logging/setLevel`` handler: remember the session's minimum level."""
    session = session_id(ctx)
    if session is not None:
        _session_levels.put(session, params.level)
    return types.EmptyResult()


def session_level(session: str | None) -> str | None:
    """The minimum level a handshake-era session set, if it set one."""
    return _session_levels.get(session) if session is not None else None


def requested_level(params: object) -> str | None:
    """The level a 2026-07-28 request opted in to (``_meta`` of its params), if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    level = meta.get(types.LOG_LEVEL_META_KEY) if isinstance(meta, dict) else None
    return level if level in LOG_LEVELS else None


def minimum_level(ctx: ServerRequestContext) -> str | None:
    """The lowest level this request's caller gets log lines at; None: it gets none."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return requested_level({"_meta": dict(ctx.meta or {})})
    return session_level(session_id(ctx)) or LOG_LEVELS[0]


def is_level(level: str) -> TypeGuard[types.LoggingLevel]:
    """Whether ``level`` is a protocol log level (the handler SDK's ``LOG_LEVELS`` are the same eight)."""
    return level in LOG_LEVELS


def at_least(level: str, minimum: str) -> bool:
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(minimum)
