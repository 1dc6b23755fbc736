"""Fair share: at most N handler runs in flight per tenant, so one tenant's slow handlers cannot take every
slot of the machine while the others wait."""

import threading
import time


class TenantGate:
    """Counts runs in flight per tenant key; ``enter`` waits (bounded) for a free slot."""

    def __init__(self, limit: int):
        if type(limit) is not int or limit < 1:
            raise ValueError(f"max_concurrent_per_tenant must be a positive int, got {limit!r}")
        self.limit = limit
        self._cond = threading.Condition()
        self._running: dict[str, int] = {}

    def enter(self, key: str, timeout_s: float) -> bool:
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

    def leave(self, key: str) -> None:
        with self._cond:
            left = self._running[key] - 1
            if left:
                self._running[key] = left
            else:
                del self._running[key]
            self._cond.notify_all()

    def running(self, key: str) -> int:
        with self._cond:
            return self._running.get(key, 0)
