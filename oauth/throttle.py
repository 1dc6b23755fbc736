"""Fixed-window counts of attempts per key (a source address, a username), for anonymous endpoints.

Open registration and the sign-in form are reached without credentials, so they cannot be charged
to a tenant or a token: they are counted per source address (and, for sign-in, per username).
Counts live in Django's cache (``CACHES``): per server process with the default in-memory cache,
shared by every replica when an operator configures a shared one (Redis, Memcached). The windows are
the platform's fixed-window limiter's (``core.rate_limits``).
"""

from __future__ import annotations

import hashlib

from django.http import HttpRequest

from core.rate_limits import CacheCounters, FixedWindowLimiter, Limited

KEY_PREFIX = "lcp-throttle"

# Over the limit: nothing was done; ``retry_after`` whole seconds until the window ends.
Throttled = Limited

_limiter = FixedWindowLimiter(CacheCounters())


def source_of(request: HttpRequest) -> str:
    """The address a request came from (the peer; a proxy in front should pass the client's own)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def _name(scope: str, key: str) -> str:
    # Keys may be any text (a username): hashed, so the cache sees a short key of safe characters.
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32]
    return f"{KEY_PREFIX}:{scope}:{digest}"


def check(scope: str, key: str, limit: int, per_seconds: int) -> Throttled | None:
    """A ``Throttled`` when ``key`` already used its ``limit`` attempts in this window; counts nothing."""
    return _limiter.check(_name(scope, key), limit, per_seconds)


def hit(scope: str, key: str, limit: int, per_seconds: int) -> Throttled | None:
    """Count one attempt of ``key`` in the current window; a ``Throttled`` when it is over ``limit``."""
    return _limiter.hit(_name(scope, key), limit, per_seconds)
