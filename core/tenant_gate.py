"""At most N in flight per tenant, with a bounded wait: the platform's thread-side gate.

Handler runs (the sandbox's fair share, ``apps_runtime.sandbox.fairshare``) and heavy record reads
(``apps_runtime.heavy_reads``) each hold one. The gateway's event loop has its async counterpart
(``mcp_gateway.protocol.concurrency.TenantShares``); the background pools are ``core.fair_pool``.
A tenant is in the gate's table only while it has something in flight, so the table never holds
more tenants than there are threads inside. Standard library only: the sandbox imports it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Hashable, Iterator


class TenantGate:
    """Counts what is in flight per tenant key; ``enter`` waits (bounded) for a free slot."""

    def __init__(self, limit: int):
        if type(limit) is not int or limit < 1:
            raise ValueError(f"max_concurrent_per_tenant must be a positive int, got {limit!r}")
        self.limit = limit
        self._cond = threading.Condition()
        self._running: dict[Hashable, int] = {}

    def enter(self, key: Hashable, timeout_s: float) -> bool:
        """Take a slot for ``key``; False if none freed up within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._running.get(key, 0) >= self.limit:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            self._running[key] = self._running.get(key, 0) + 1
            return True

    def leave(self, key: Hashable) -> None:
        with self._cond:
            left = self._running[key] - 1
            if left:
                self._running[key] = left
            else:
                del self._running[key]
            self._cond.notify_all()

    @contextlib.contextmanager
    def slot(self, key: Hashable, timeout_s: float) -> Iterator[bool]:
        """Hold a slot of ``key`` for the block; yields False (holding none) when none freed up in time."""
        entered = self.enter(key, timeout_s)
        try:
            yield entered
        finally:
            if entered:
                self.leave(key)

    def running(self, key: Hashable) -> int:
        with self._cond:
            return self._running.get(key, 0)

    def tenants(self) -> int:
        """Tenants with something in flight (the size of the table)."""
        with self._cond:
            return len(self._running)
