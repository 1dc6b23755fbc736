"""Fixed-window rate limits: one limiter, its counts kept by a backend.

A window is a period of ``per_seconds`` aligned on the Unix epoch; each attempt adds one to its
window's count, and an attempt that makes the count pass ``limit`` is ``Limited`` with the whole
seconds left in the window. Fixed windows cost one atomic round trip per attempt; the price is that
a caller may fit up to twice ``limit`` across a window boundary.

Backends (``Counters``): ``CacheCounters`` here (Django's cache: per process with the default
in-memory cache, shared when the operator configures a shared one), used by the OAuth throttles
(``oauth.throttle``); the gateway's Redis-or-database counters (``mcp_gateway.limits.rate_counters``),
used by the tool limits. Not the ``limits`` library: it has no database storage, and the embedded
default (no Redis) must count across server processes; nor its fail-open-once-per-outage policy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from django.core.cache import cache


@dataclass(frozen=True)
class Limited:
    """Over the limit: nothing was done; ``retry_after`` whole seconds until the window ends."""

    limit: int
    retry_after: int


class Counters(Protocol):
    """Where window counts live."""

    def hit(self, key: str, ttl: int, now: float) -> int | None:
        """Add one to ``key``, kept ``ttl`` seconds after ``now``; the count with it (None: not counted)."""
        ...

    def current(self, key: str) -> int:
        """The count of ``key`` so far, counting nothing (0 when there is none)."""
        ...


@dataclass(frozen=True)
class Window:
    """The window of ``seconds`` that holds a moment."""

    start: int
    seconds: int

    @classmethod
    def of(cls, now: float, seconds: int) -> Window:
        return cls(int(now // seconds) * seconds, seconds)

    def ttl(self, now: float) -> int:
        # A second past the window's end: servers' clocks differ a little.
        return self.start + self.seconds - int(now) + 1

    def retry_after(self, now: float) -> int:
        return max(1, math.ceil(self.start + self.seconds - now))


class FixedWindowLimiter:
    """Counts attempts per key in fixed windows; ``clock`` is read unless a call passes ``now``."""

    def __init__(self, counters: Counters, *, clock: Callable[[], float] = time.time) -> None:
        self.counters = counters
        self.clock = clock

    def hit(self, key: str, limit: int, per_seconds: int, *, now: float | None = None) -> Limited | None:
        """Count one attempt of ``key``; ``Limited`` when it is over ``limit`` in its window.

        An attempt the backend could not count (None) passes: a rate limit guards cost, not access.
        """
        now = self.clock() if now is None else now
        window = Window.of(now, per_seconds)
        count = self.counters.hit(f"{key}:{window.start}", window.ttl(now), now)
        if count is None or count <= limit:
            return None
        return Limited(limit, window.retry_after(now))

    def check(self, key: str, limit: int, per_seconds: int, *, now: float | None = None) -> Limited | None:
        """``Limited`` when the next attempt of ``key`` would be over ``limit``; counts nothing."""
        now = self.clock() if now is None else now
        window = Window.of(now, per_seconds)
        if self.counters.current(f"{key}:{window.start}") < limit:
            return None
        return Limited(limit, window.retry_after(now))


class CacheCounters:
    """Counts in Django's cache (``CACHES``)."""

    def hit(self, key: str, ttl: int, now: float) -> int | None:
        # add() then incr(): each atomic in the cache.
        cache.add(key, 0, timeout=ttl)
        try:
            return cache.incr(key)
        except ValueError:  # expired between the two calls: this attempt opens a new count
            cache.add(key, 1, timeout=ttl)
            return 1

    def current(self, key: str) -> int:
        return int(cache.get(key) or 0)
