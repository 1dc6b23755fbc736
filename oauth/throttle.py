"""Fixed-window counts of attempts per key (a source address, a username), for anonymous endpoints.

Open registration and the sign-in form are reached without credentials, so they cannot be charged
to a tenant or a token: they are counted per source address (and, for sign-in, per username).
Counts live in Django's cache (``CACHES``): per server process with the default in-memory cache,
shared by every replica when an operator configures a shared one (Redis, Memcached).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.http import HttpRequest

KEY_PREFIX = "lcp-throttle"


@dataclass(frozen=True)
class Throttled:
    """Over the limit: nothing was done; ``retry_after`` whole seconds until the window ends."""

    limit: int
    retry_after: int


def source_of(request: HttpRequest) -> str:
    """The address a request came from (the peer; a proxy in front should pass the client's own)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def _name(scope: str, key: str, window: int) -> str:
    # Keys may be any text (a username): hashed, so the cache sees a short key of safe characters.
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32]
    return f"{KEY_PREFIX}:{scope}:{window}:{digest}"


def _over(limit: int, count: int, window: int, per_seconds: int, now: float) -> Throttled | None:
    if count <= limit:
        return None
    return Throttled(limit=limit, retry_after=max(1, math.ceil((window + 1) * per_seconds - now)))


def check(scope: str, key: str, limit: int, per_seconds: int) -> Throttled | None:
    """A ``Throttled`` when ``key`` already used its ``limit`` attempts in this window; counts nothing."""
    now = time.time()
    window = int(now // per_seconds)
    return _over(limit, (cache.get(_name(scope, key, window)) or 0) + 1, window, per_seconds, now)


def hit(scope: str, key: str, limit: int, per_seconds: int) -> Throttled | None:
    """Count one attempt of ``key`` in the current window; a ``Throttled`` when it is over ``limit``."""
    now = time.time()
    window = int(now // per_seconds)
    name = _name(scope, key, window)
    # add() then incr(): each atomic in the cache; the key outlives its window by a little.
    cache.add(name, 0, timeout=per_seconds + 1)
    try:
        count = cache.incr(name)
    except ValueError:  # expired between the two calls: this attempt opens a new count
        cache.add(name, 1, timeout=per_seconds + 1)
        count = 1
    return _over(limit, count, window, per_seconds, now)
