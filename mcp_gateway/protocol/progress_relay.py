"""A running tool call's progress and log lines, relayed to its MCP caller on the call's stream.

The handler runs in a worker thread (``concurrency.in_thread``); its notices arrive there, through
``run_route(RouteCall(events=...))``, and a task on the event loop sends them as ``notifications/progress``
(with the caller's progress token) and ``notifications/message`` tied to the request. Only a call
answered with an event stream (``streaming``) has anywhere to send them.

Bounds: progress is paced as the handler SDK paces it (``protocol.Pacer``: a short burst, then at
most ``PROGRESS_PER_SECOND``), the latest value winning, the last one always sent, and only forward;
log lines below the caller's level are dropped, and the sandbox already caps their number and length
per call (``protocol.MAX_LOG_NOTICES``, ``MAX_NOTICE_CHARS``). The queue of lines waiting to be sent
is bounded by that cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext

from apps_runtime.handler_contract import PROGRESS_BURST, progress_pacer
from mcp_gateway.protocol import log_levels
from mcp_gateway.protocol.context import streamed

logger = logging.getLogger("mcp_gateway.protocol.progress_relay")

Handler = Callable[[ServerRequestContext, Any], Awaitable[Any]]


class Relay:
    """``CallEvents`` fed from the worker thread, drained by ``run`` on the event loop."""

    def __init__(
        self, ctx: ServerRequestContext, token: str | int | None, minimum_level: str | None, name: str
    ):
        self._ctx, self._token, self._minimum, self._name = ctx, token, minimum_level, name
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._finished = asyncio.Event()
        self._lock = threading.Lock()
        # Waiting to go, oldest first (done, total, message); at most a burst's worth.
        self._progress: list[tuple[float, float | None, str | None]] = []
        self._lines: list[tuple[types.LoggingLevel, str]] = []
        self._broken = False
        self._pacer = progress_pacer()

    # -- the worker thread ----------------------------------------------------------------------------
    def progress(self, done: float, total: float | None, message: str | None) -> None:
        if self._token is None:
            return
        with self._lock:
            self._progress = [*self._progress[1 - PROGRESS_BURST :], (done, total, message)]
        self._loop.call_soon_threadsafe(self._wake.set)

    def log(self, level: str, message: str) -> None:
        if self._minimum is None or not log_levels.at_least(level, self._minimum):
            return
        if not log_levels.is_level(level):  # never: ``at_least`` knows only these levels
            return
        with self._lock:
            self._lines.append((level, message))
        self._loop.call_soon_threadsafe(self._wake.set)

    # -- the event loop -------------------------------------------------------------------------------
    async def run(self) -> None:
        """Send what arrives until ``finish``, then what is left; progress as the pacer allows."""
        while not self._finished.is_set():
            await self._wake.wait()
            self._wake.clear()
            await self._deliver()
            with anyio.move_on_after(self._pacer.wait()):
                await self._finished.wait()
        # What arrived while the last round was being sent: the handler's final progress comes
        # just before its result, so ``finish`` often lands while ``_deliver`` is awaiting the wire.
        await self._deliver(last=True)

    def finish(self) -> None:
        self._finished.set()
        self._wake.set()

    async def _deliver(self, *, last: bool = False) -> None:
        with self._lock:
            lines, self._lines = self._lines, []
            if last:  # the handler's final value always arrives
                progress, self._progress = self._progress[-1:], []
            else:
                progress = []
                while self._progress and self._pacer.take():
                    progress.append(self._progress.pop(0))
                if self._progress:  # held back: the latest goes once the pacer allows (``run`` waits)
                    self._progress = self._progress[-1:]
                    self._wake.set()
        if self._broken:
            return
        session, request_id, token = self._ctx.session, self._ctx.request_id, self._token
        try:
            for level, message in lines:
                params = types.LoggingMessageNotificationParams(level=level, data=message, logger=self._name)
                await session.send_notification(types.LoggingMessageNotification(params=params), request_id)
            for done, total, note in progress:  # queued only with a token (``progress``)
                if token is not None:
                    update = types.ProgressNotificationParams(
                        progress_token=token, progress=done, total=total, message=note
                    )
                    await session.send_notification(types.ProgressNotification(params=update), request_id)
        except Exception:  # the caller went away: the call itself goes on, unheard
            logger.debug("progress relay stopped for request %s", request_id, exc_info=True)
            self._broken = True


@contextlib.asynccontextmanager
async def relayed(ctx: ServerRequestContext, name: str) -> AsyncIterator[Relay | None]:
    """The receiver of the notices of the tool call ``name`` served in this block (for its
    ``CallContext.events``), relaying them to its caller while the block runs.

    None unless the call has an event stream and its caller wants progress or log lines.
    """
    relay = _relay_for(ctx, name)
    if relay is None:
        yield None
        return
    # A task of its own, not a task group: the call's own errors (MCPError: an unknown tool, a busy
    # tenant) must reach the SDK as they are, not wrapped in an exception group.
    pump = asyncio.get_running_loop().create_task(relay.run())
    try:
        yield relay
    finally:
        relay.finish()
        await pump  # the last notices go out before the answer


def _relay_for(ctx: ServerRequestContext, name: str) -> Relay | None:
    if not streamed():
        return None
    token = (ctx.meta or {}).get("progress_token")
    minimum = log_levels.minimum_level(ctx)
    if token is None and minimum is None:
        return None
    return Relay(ctx, token, minimum, name)
