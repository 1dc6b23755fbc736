"""The builder's one way from async code to the ORM: a worker thread with Django's connection hygiene,
at most BUILDER_CALLS_PER_TENANT at once per tenant (validating and deploying compile handler code,
so one tenant's agent cannot take every worker thread); the others wait their turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from django.conf import settings
from django.db import close_old_connections

from core.caches import BoundedCache

T = TypeVar("T")
_limiters: BoundedCache[int, anyio.CapacityLimiter] = BoundedCache(1024)


def tenant_limiter(tenant_id: int) -> anyio.CapacityLimiter:
    """The tenant's share of builder threads (a tenant evicted while in use keeps its old limiter's
    holders; the next call gets a fresh one, so the bound can be passed for a moment, never long)."""
    limiter = _limiters.get(tenant_id)
    if limiter is None or limiter.total_tokens != settings.BUILDER_CALLS_PER_TENANT:
        limiter = _limiters.put(tenant_id, anyio.CapacityLimiter(settings.BUILDER_CALLS_PER_TENANT))
    return limiter


async def in_thread(fn: Callable[..., T], *args: Any, tenant_id: int | None = None) -> T:
    """``fn(*args)`` in a worker thread, its stale or broken database connections closed around it;
    with ``tenant_id``, within that tenant's share."""

    def run() -> T:
        close_old_connections()
        try:
            return fn(*args)
        finally:
            close_old_connections()

    limiter = tenant_limiter(tenant_id) if tenant_id is not None else None
    return await anyio.to_thread.run_sync(run, limiter=limiter)
