"""Window counters shared by every server process: Redis when ``RATE_LIMIT_REDIS_URL`` is set, else the
database (``SharedCounters``, a backend of ``core.rate_limits``).

``hit(key, ttl)`` adds one call to the window named ``key`` and returns the window's count with it,
in one atomic round trip (Redis ``MULTI INCR EXPIRE EXEC``; the database's ``INSERT ... ON
CONFLICT DO UPDATE ... RETURNING``, on PostgreSQL and SQLite alike), so concurrent calls in any
number of processes each see a distinct count.

Redis down: the call is let through (``None``) and a warning is logged, once per outage. A rate
limit guards cost and fairness, not access, and every tool with a limit failing for as long as
Redis is away would be the larger harm; after a failure Redis is left alone for
``REDIS_RETRY_SECONDS``, so an outage does not add a connect timeout to every limited call.
"""

from __future__ import annotations

import functools
import logging
import threading
import time

import redis
from django.conf import settings
from django.db import connection

from mcp_gateway.models import RateLimitCounter

logger = logging.getLogger("mcp_gateway.limits.rate_counters")

REDIS_TIMEOUT_SECONDS = 0.5
REDIS_RETRY_SECONDS = 5.0
PURGE_EVERY_SECONDS = 60.0


@functools.cache
def _redis(url: str) -> redis.Redis:
    # One client (and its thread-safe connection pool) per URL and process.
    return redis.Redis.from_url(
        url, socket_connect_timeout=REDIS_TIMEOUT_SECONDS, socket_timeout=REDIS_TIMEOUT_SECONDS
    )


class _RedisHealth:
    """Whether to try Redis now; a failure opens a pause, and one warning is logged per outage."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._down = False

    def should_try(self) -> bool:
        return time.monotonic() >= self._down_until

    def failed(self, err: Exception) -> None:
        with self._lock:
            self._down_until = time.monotonic() + REDIS_RETRY_SECONDS
            if self._down:
                return
            self._down = True
        logger.warning("Rate-limit Redis unreachable (%s): limited tools run uncounted until it is back", err)

    def succeeded(self) -> None:
        if self._down:
            with self._lock:
                self._down = False
            logger.warning("Rate-limit Redis is back: limits are counted again")


_health = _RedisHealth()


def _hit_redis(url: str, key: str, ttl: int) -> int | None:
    if not _health.should_try():
        return None
    try:
        with _redis(url).pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, ttl)
            count, _ = pipe.execute()
    except redis.RedisError as err:
        _health.failed(err)
        return None
    _health.succeeded()
    return int(count)


class _Purger:
    """Deletes ended windows' rows, at most every ``PURGE_EVERY_SECONDS`` per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0.0

    def maybe_purge(self, now: float) -> None:
        with self._lock:
            if time.monotonic() < self._next:
                return
            self._next = time.monotonic() + PURGE_EVERY_SECONDS
        RateLimitCounter.objects.filter(expires_at__lt=int(now)).delete()


_purger = _Purger()


def _hit_database(key: str, ttl: int, now: float) -> int:
    _purger.maybe_purge(now)
    # The table name comes from the model; the key and the time are parameters.
    table = connection.ops.quote_name(RateLimitCounter._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (window_key, count, expires_at) VALUES (%s, 1, %s) "
            f"ON CONFLICT (window_key) DO UPDATE SET count = {table}.count + 1 RETURNING count",
            [key, int(now) + ttl],
        )
        return cursor.fetchone()[0]


def hit(key: str, ttl: int, now: float) -> int | None:
    """Count one call in the window ``key`` that ends ``ttl`` seconds after ``now``; its count with this call.

    None: not counted (Redis configured but unreachable); the caller lets the call through.
    """
    url = settings.RATE_LIMIT_REDIS_URL
    if url:
        return _hit_redis(url, key, ttl)
    return _hit_database(key, ttl, now)


def current(key: str) -> int:
    """Calls counted so far in the window ``key``, counting none (0 when none, or Redis unreachable)."""
    url = settings.RATE_LIMIT_REDIS_URL
    if url:
        if not _health.should_try():
            return 0
        try:
            value = _redis(url).get(key)
        except redis.RedisError as err:
            _health.failed(err)
            return 0
        return int(value or 0)
    row = RateLimitCounter.objects.filter(window_key=key).values_list("count", flat=True).first()
    return row or 0


class SharedCounters:
    """This module as a ``core.rate_limits.Counters`` backend."""

    def hit(self, key: str, ttl: int, now: float) -> int | None:
        return hit(key, ttl, now)

    def current(self, key: str) -> int:
        return current(key)
