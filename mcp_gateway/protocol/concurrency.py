"""Crossing from the event loop into synchronous ORM and sandbox work, once, in one way.

Every crossing made while serving a tenant's request is charged to that tenant: it first waits,
on the event loop and holding no thread, for one of the tenant's ``MCP_TENANT_SHARE`` slots of the
worker pool. So one tenant flooding slow tools holds at most its share of the threads, and another
tenant's calls still find one free. The wait is bounded in length (``MCP_TENANT_QUEUE``) and in
time (``MCP_TENANT_QUEUE_SECONDS``); past either the call is refused with ``TenantBusy``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import anyio
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import close_old_connections, connections
from mcp.shared.exceptions import MCPError

from core.error_ids import error_id_note, new_error_id
from mcp_gateway.protocol.context import served

logger = logging.getLogger("mcp_gateway.protocol.concurrency")

T = TypeVar("T")

# JSON-RPC code of "try again later" answers (tenant busy, too many sessions): implementation-defined
# server-error range, clear of the codes the SDK uses (-32000, -32001, -32020..-32022, -32042).
SERVER_BUSY = -32029
RETRY_AFTER_SECONDS = 1

# A connection used without error this recently skips Django's health check (see below).
HEALTHY_FOR_S = 1.0
_healthy_at = threading.local()


class TenantBusy(MCPError):
    """The tenant already uses its share of the worker pool and its wait queue is full or too slow."""

    def __init__(self, tenant_id: int, share: int, reason: str):
        self.tenant_id = tenant_id
        self.error_id = new_error_id()
        self.retry_after = RETRY_AFTER_SECONDS
        super().__init__(
            SERVER_BUSY,
            f"This workspace already has {share} calls running and {reason}; "
            f"retry in {self.retry_after} s {error_id_note(self.error_id)}.",
            {"errorId": self.error_id, "retryAfter": self.retry_after},
        )


@dataclass(frozen=True)
class ShareLimits:
    share: int  # crossings in flight per tenant
    queue: int  # crossings waiting per tenant
    wait_s: float  # longest wait for a slot


def share_limits() -> ShareLimits:
    """The per-tenant limits from settings.

    Raises:
        ImproperlyConfigured: a share below 1, a negative queue or a non-positive wait.
    """
    limits = ShareLimits(
        share=settings.MCP_TENANT_SHARE,
        queue=settings.MCP_TENANT_QUEUE,
        wait_s=float(settings.MCP_TENANT_QUEUE_SECONDS),
    )
    if limits.share < 1 or limits.queue < 0 or not limits.wait_s > 0:
        raise ImproperlyConfigured(
            "MCP_TENANT_SHARE must be >= 1, MCP_TENANT_QUEUE >= 0 and MCP_TENANT_QUEUE_SECONDS > 0"
        )
    return limits


@dataclass
class _TenantSlots:
    running: int = 0
    waiting: deque[anyio.Event] = field(default_factory=deque)


class TenantShares:
    """Slots per tenant, handed to waiters first come, first served. Event-loop thread only."""

    def __init__(self) -> None:
        self._tenants: dict[int, _TenantSlots] = {}

    def running(self, tenant_id: int) -> int:
        slots = self._tenants.get(tenant_id)
        return slots.running if slots is not None else 0

    def waiting(self, tenant_id: int) -> int:
        slots = self._tenants.get(tenant_id)
        return len(slots.waiting) if slots is not None else 0

    def totals(self) -> tuple[int, int]:
        """``(running, waiting)`` summed over every tenant (a reading for the metrics)."""
        return (
            sum(slots.running for slots in self._tenants.values()),
            sum(len(slots.waiting) for slots in self._tenants.values()),
        )

    async def acquire(self, tenant_id: int, limits: ShareLimits) -> None:
        """Take one of the tenant's slots, waiting (bounded) for one to free up.

        Raises:
            TenantBusy: the wait queue is full, or no slot freed up within ``limits.wait_s``.
        """
        slots = self._tenants.setdefault(tenant_id, _TenantSlots())
        if slots.running < limits.share and not slots.waiting:
            slots.running += 1
            return
        if len(slots.waiting) >= limits.queue:
            raise TenantBusy(tenant_id, limits.share, "no room to wait")
        turn = anyio.Event()
        slots.waiting.append(turn)
        try:
            with anyio.fail_after(limits.wait_s):
                await turn.wait()
        except TimeoutError:
            if turn.is_set():  # handed a slot just as the wait ran out: take it
                return
            self._leave_queue(tenant_id, slots, turn)
            raise TenantBusy(tenant_id, limits.share, "none freed up in time") from None
        except BaseException:  # cancelled while waiting: a slot handed over must not be lost
            if turn.is_set():
                self.release(tenant_id)
            else:
                self._leave_queue(tenant_id, slots, turn)
            raise

    def _leave_queue(self, tenant_id: int, slots: _TenantSlots, turn: anyio.Event) -> None:
        slots.waiting.remove(turn)
        self._forget_if_idle(tenant_id, slots)

    def release(self, tenant_id: int) -> None:
        """Give the slot back: straight to the next waiter, if any."""
        slots = self._tenants[tenant_id]
        if slots.waiting:
            slots.waiting.popleft().set()  # the slot changes hands; ``running`` stays
            return
        slots.running -= 1
        self._forget_if_idle(tenant_id, slots)

    def _forget_if_idle(self, tenant_id: int, slots: _TenantSlots) -> None:
        if slots.running == 0 and not slots.waiting:
            self._tenants.pop(tenant_id, None)


shares = TenantShares()


class Crossings:
    """The gateway's worker threads: one queue, threads started as work arrives, at most ``size``.

    What ``ThreadPoolExecutor`` and ``run_in_executor`` do, without their per-crossing future with its
    condition variable, their two locks and their chained futures: a crossing costs a quarter of the
    event loop's CPU it cost there (~8 against ~30-45 us on this VM), and a tools/call crosses at
    least once. The answer comes back as a callback on the loop, like ``run_in_executor``'s.
    """

    def __init__(self, size: int, name: str = "mcp-gateway"):
        self.size = size
        self.name = name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # threads waiting for work that no queued item has claimed yet

    def submit(self, loop: asyncio.AbstractEventLoop, work: Callable[[], T]) -> asyncio.Future[T]:
        """``work()`` in a worker thread; its result (or exception) in the returned future of ``loop``."""
        future = loop.create_future()
        self._queue.put((loop, future, work))
        with self._lock:
            if self._idle:
                self._idle -= 1
                return future
            if self._threads >= self.size:
                return future  # every thread is busy: the item waits for the first to finish
            self._threads += 1
            number = self._threads
        threading.Thread(target=self._work, name=f"{self.name}_{number}", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            loop, future, work = self._queue.get()
            outcome: tuple[Any, BaseException | None]
            try:
                outcome = (work(), None)
            except BaseException as exc:  # the caller's to handle, as with an executor's future
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(_settle, future, *outcome)
            del loop, future, work, outcome  # hold nothing of a finished crossing while idle
            with self._lock:
                self._idle += 1


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if future.done():  # cancelled while the thread worked
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


@functools.cache
def _crossings(size: int) -> Crossings:
    # Tool calls block on handler runs; threads of their own keep them off Django's thread-sensitive
    # executor and let calls run side by side. One pool per size: the setting is read per call.
    return Crossings(size)


def _with_connection_hygiene(fn: Callable[..., T], *args: Any) -> T:
    # What Django does around each request: drop connections past CONN_MAX_AGE or broken ones.
    close_old_connections()
    _skip_fresh_health_checks()
    try:
        return fn(*args)
    finally:
        _note_healthy_connections()
        close_old_connections()


def _skip_fresh_health_checks() -> None:
    """Spare a connection this thread used without error moments ago its health check.

    With CONN_HEALTH_CHECKS Django checks a kept connection (PostgreSQL: a ``SELECT 1`` round trip)
    before its first query of each request, and a call crosses into a thread twice: two of the
    six round trips of a ``records_get`` on PostgreSQL, 2.6 ms of its 8.2 ms p50 on a busy host
    (issue 11). A connection that answered within ``HEALTHY_FOR_S`` is as good as checked; one
    that broke since fails its query, is marked, and is closed at the end of the crossing.
    """
    fresh_since = time.monotonic() - HEALTHY_FOR_S
    healthy = getattr(_healthy_at, "by_alias", {})
    for connection in connections.all(initialized_only=True):
        answered_at = healthy.get(connection.alias)
        if connection.connection is not None and answered_at is not None and answered_at > fresh_since:
            # Django's own flag (since 4.1), which django-stubs do not declare.
            connection.health_check_done = True  # type: ignore[attr-defined]


def _note_healthy_connections() -> None:
    now = time.monotonic()
    healthy = _healthy_at.__dict__.setdefault("by_alias", {})
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.errors_occurred:
            healthy[connection.alias] = now
        else:
            healthy.pop(connection.alias, None)


async def _run(fn: Callable[..., T], *args: Any) -> T:
    # The caller's context variables go along (the request being served, the tenant charged).
    # The executor straight, not asgiref's sync_to_async: its thread-sensitivity machinery costs
    # as much as the crossing itself, and nothing run here calls back into async code.
    work = partial(contextvars.copy_context().run, _with_connection_hygiene, fn, *args)
    crossing = _crossings(settings.MCP_WORKER_THREADS).submit(asyncio.get_running_loop(), work)
    # Shielded: a cancelled caller (client disconnect, notifications/cancelled) still waits for the
    # thread, so the slot it holds is not given back while the thread keeps working.
    with anyio.CancelScope(shield=True):
        result = await crossing
    return result


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` in the gateway's thread pool, with Django's connection hygiene.

    While serving a request (``context.serving``), first wait for one of its tenant's slots.

    Raises:
        TenantBusy: the tenant's share is in use and it may not wait (see ``TenantShares.acquire``).
    """
    gw = served.get()
    return await in_thread_for(gw.tenant.pk if gw is not None else None, fn, *args)


async def in_thread_for(tenant_id: int | None, fn: Callable[..., T], *args: Any) -> T:
    """``in_thread`` charged to ``tenant_id`` explicitly (None: to nobody), for work that serves a
    tenant outside a gateway request (the builder's endpoint).

    Raises:
        TenantBusy: the tenant's share is in use and it may not wait (see ``TenantShares.acquire``).
    """
    if tenant_id is None:
        return await _run(fn, *args)
    try:
        await shares.acquire(tenant_id, share_limits())
    except TenantBusy as busy:
        logger.warning("tenant %s busy: call refused (%s)", tenant_id, busy.error_id)
        raise
    try:
        return await _run(fn, *args)
    finally:
        shares.release(tenant_id)
