"""Background work named by a row id: sent once the row commits, to Celery or to threads of this process.

A send before its row commits could reach a worker that cannot see the row yet, so every send waits
for the current transaction (``transaction.on_commit``, robust: a failed send is logged, the row
stays queued and its owner's sweep sends it again).

With a broker, the id goes to the Celery task named ``task_name``. Without one (the embedded
default, ``task_always_eager``) the work must not run in the thread that sends it (the request's),
so it goes to a ``core.fair_pool.FairPool`` of this process, built on first use from the settings of
that moment: ``workers_setting`` threads, at most ``share_setting`` of them for one tenant, and
(given ``member_of``) the tenant's members served in turn.

Agent runs (``agents.queue``), MCP task runs (``mcp_gateway.mcp_tasks.queue``) and app job runs
(``apps_runtime.jobs.queue``) are each one ``Dispatcher``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction

from core import tracing
from core.fair_pool import FairPool

logger = logging.getLogger("core.background")


@dataclass
class Dispatcher:
    """Sends ids of one kind of background work (see the module docstring)."""

    name: str  # the pool's thread names and the logs'
    task_name: str  # the Celery task that takes one id
    tenant_of: Callable[[str], Hashable | None]  # the row's tenant; None when it is gone (nothing to run)
    run: Callable[[str], object]  # the work itself, in a thread of this process (its result unused)
    workers_setting: str
    share_setting: str
    nice: int = 0  # niced threads yield the CPU to requests being answered
    # The row's member (``Caller.person_key``): the pool then serves a tenant's members in turn.
    member_of: Callable[[str], Hashable] | None = None
    _pool: FairPool | None = field(default=None, init=False, repr=False)
    _pool_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def send_on_commit(self, ids: Iterable[str], *, countdown: float | None = None) -> None:
        """Send each id once the current transaction commits (at once outside one).

        ``countdown`` delays a Celery send; in-process there is nobody to wait for it, so the work
        runs as soon as a thread is free.
        """
        for one in ids:
            transaction.on_commit(self._sender(one, countdown), robust=True)

    def in_process_pool(self) -> FairPool:
        """This process's threads for the work (built on first use, from the settings of that moment)."""
        with self._pool_lock:
            if self._pool is None:
                workers = getattr(settings, self.workers_setting)
                share = getattr(settings, self.share_setting)
                self._pool = FairPool(self.name, workers, share, nice=self.nice)
            return self._pool

    def forget_pool(self) -> None:
        """Build the pool again on the next send (tests that change its settings)."""
        with self._pool_lock:
            self._pool = None

    def _sender(self, one: str, countdown: float | None) -> Callable[[], None]:
        parent = tracing.current_traceparent()  # the work continues the trace that asked for it

        # A named function, not a partial: Django names a failed robust callback by its __qualname__.
        def send_background_work() -> None:
            self._send(one, countdown, parent)

        return send_background_work

    def _send(self, one: str, countdown: float | None, parent: str | None = None) -> None:
        if not current_app.conf.task_always_eager:
            # Under the sender's trace: Celery's instrumentation puts it in the message for the worker.
            with tracing.span(f"{self.name} send", parent=parent) if parent else nullcontext():
                current_app.send_task(self.task_name, (one,), countdown=countdown)
            return
        tenant = self.tenant_of(one)
        if tenant is not None:  # deleted or purged meanwhile: nothing to run
            member = self.member_of(one) if self.member_of is not None else None
            self.in_process_pool().submit(tenant, self._run_in_process, one, parent, member=member)

    def _run_in_process(self, one: str, parent: str | None = None) -> None:
        try:
            with tracing.span(self.name, {"lcp.work.id": one}, parent=parent) if parent else nullcontext():
                self.run(one)
        except Exception:  # the top of a pool thread: one failure must not strand the work queued after it
            logger.exception("%s %s failed in-process", self.name, one)
        finally:
            close_old_connections()
