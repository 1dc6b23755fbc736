"""Fair shares of outbound requests: each tenant may have a few in flight at once (per process), all
tenants together a bounded number, so one tenant's hanging upstream holds only its own share.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings


class Busy(Exception):
    """No share came free before the call's time ran out."""

    def __init__(self, scope: str):
        self.scope = scope
        super().__init__(f"too many outbound requests in flight ({scope})")


_lock = threading.Lock()
# Keyed by the limit too, so a changed setting (a test's override) takes effect.
_semaphores_by_key: dict[tuple, threading.BoundedSemaphore] = {}


def _semaphore(key: tuple, limit: int) -> threading.BoundedSemaphore:
    with _lock:
        semaphore = _semaphores_by_key.get((*key, limit))
        if semaphore is None:
            semaphore = _semaphores_by_key[(*key, limit)] = threading.BoundedSemaphore(limit)
        return semaphore


def _semaphores(tenant_id: int) -> tuple[threading.BoundedSemaphore, threading.BoundedSemaphore]:
    return (
        _semaphore(("tenant", tenant_id), settings.EGRESS_MAX_CONCURRENT_PER_TENANT),
        _semaphore(("all",), settings.EGRESS_MAX_CONCURRENT),
    )


@contextmanager
def share(tenant_id: int, deadline: float) -> Iterator[None]:
    """Hold one of the tenant's shares (and one of everyone's) while the block runs.

    Raises:
        Busy: none came free before ``deadline`` (``time.monotonic``).
    """
    mine, everyone = _semaphores(tenant_id)
    if not mine.acquire(timeout=max(0.0, deadline - time.monotonic())):
        raise Busy("this tenant's share")
    try:
        if not everyone.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise Busy("the platform's")
        try:
            yield
        finally:
            everyone.release()
    finally:
        mine.release()


_windows: dict[int, tuple[int, int]] = {}  # tenant id -> (minute, requests made in it)


def take_tenant_request(tenant_id: int) -> bool:
    """Count one outbound request of the tenant in this minute (per process); False when over
    ``EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE``.
    """
    minute = int(time.time() // 60)
    with _lock:
        seen, count = _windows.get(tenant_id, (minute, 0))
        count = count + 1 if seen == minute else 1
        _windows[tenant_id] = (minute, count)
        if len(_windows) > 10_000:  # tenants idle since an earlier minute are forgotten
            for key in [key for key, (m, _) in _windows.items() if m != minute]:
                del _windows[key]
    return count <= settings.EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE
