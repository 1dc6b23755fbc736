"""A small pool of threads shared fairly by tenants: background work run inside the server process.

With no broker (the embedded default) MCP task runs and app job runs execute in the server. A plain
FIFO pool lets one tenant's backlog hold every thread while another tenant's one trivial task waits
behind it. Here each tenant has a queue of its own, a tenant runs at most ``share`` items at once,
and free threads take the next item from the tenants in turn (round robin), so a tenant's backlog
waits behind its own work only. Inside a tenant, items submitted for different members are taken in
turn the same way (a member with nothing queued first), so one member's backlog does not hold
another member's item of the same tenant back (each member still waits behind their own).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("core.fair_pool")


Item = tuple[Callable[..., Any], tuple]


@dataclass
class _Tenant:
    # One queue per member, in turn order: the next member served comes first.
    members: dict[Hashable, deque[Item]] = field(default_factory=dict)
    running: int = 0

    @property
    def queued(self) -> int:
        return sum(len(items) for items in self.members.values())

    def append(self, member: Hashable, item: Item) -> None:
        if member in self.members:
            self.members[member].append(item)
        else:
            # A member with nothing queued goes first: those with a backlog have been served already.
            self.members = {member: deque([item]), **self.members}

    def popleft(self) -> Item:
        """The next member's oldest item; that member goes to the back of the turn order."""
        member, items = next(iter(self.members.items()))
        item = items.popleft()
        del self.members[member]
        if items:
            self.members[member] = items
        return item


class FairPool:
    """``workers`` daemon threads, started as work arrives; at most ``share`` of them per tenant."""

    def __init__(self, name: str, workers: int, share: int, *, nice: int = 0):
        if workers < 1 or share < 1:
            raise ValueError("a fair pool needs at least one worker and a share of at least one")
        self.name = name
        self.nice = nice
        self.workers = workers
        self.share = min(share, workers)
        self._lock = threading.Condition()
        self._tenants: dict[Hashable, _Tenant] = {}  # in turn order: the next tenant served comes first
        self._threads: list[threading.Thread] = []

    def submit(self, tenant: Hashable, fn: Callable[..., Any], *args: Any, member: Hashable = None) -> None:
        """Queue ``fn(*args)`` for ``tenant`` (and ``member`` of it: taken in turn with the tenant's
        other members); exceptions it raises are logged, never propagated."""
        with self._lock:
            self._tenants.setdefault(tenant, _Tenant()).append(member, (fn, args))
            if len(self._threads) < self.workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            self._lock.notify()

    def queued(self, tenant: Hashable) -> int:
        """Items of ``tenant`` waiting for a thread."""
        with self._lock:
            found = self._tenants.get(tenant)
            return found.queued if found is not None else 0

    def running(self, tenant: Hashable) -> int:
        with self._lock:
            found = self._tenants.get(tenant)
            return found.running if found is not None else 0

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (False if ``timeout`` seconds pass first)."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._tenants, timeout)

    def _next(self) -> tuple[Hashable, Callable[..., Any], tuple] | None:
        for key, tenant in self._tenants.items():
            if tenant.members and tenant.running < self.share:
                fn, args = tenant.popleft()
                tenant.running += 1
                # The tenant goes to the back of the turn order.
                del self._tenants[key]
                self._tenants[key] = tenant
                return key, fn, args
        return None

    def _work(self) -> None:
        if self.nice:
            # Background work yields the CPU to requests being answered: Linux schedules each thread
            # on its own, so a niced thread runs when the cores have nothing more urgent.
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)
        while True:
            with self._lock:
                while (item := self._next()) is None:
                    self._lock.wait()
            key, fn, args = item
            try:
                fn(*args)
            except Exception:  # the top of a pool thread: the item's owner recovers what it left behind
                logger.exception("%s: background work of %s failed", self.name, key)
            finally:
                with self._lock:
                    tenant = self._tenants[key]
                    tenant.running -= 1
                    if not tenant.members and not tenant.running:
                        del self._tenants[key]
                    self._lock.notify_all()
