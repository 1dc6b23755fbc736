"""Window counters: atomic under concurrency on real PostgreSQL (or SQLite) and real Redis; their cost."""

from __future__ import annotations

import threading
import time

import pytest
import redis
from django.db import connection

from mcp_gateway import rate_counters, tool_calls
from mcp_gateway.auth import authenticate
from mcp_gateway.models import RateLimitCounter
from tests.support.apps import cases_manifest

REDIS_URL = "redis://127.0.0.1:6379/8"
THREADS, HITS = 8, 25


@pytest.fixture(params=["database", "redis"])
def backend(request, settings):
    if request.param == "redis":
        redis.Redis.from_url(REDIS_URL).flushdb()
    settings.RATE_LIMIT_REDIS_URL = REDIS_URL if request.param == "redis" else None
    return request.param


@pytest.mark.django_db(transaction=True)
def test_concurrent_hits_each_see_a_distinct_count(backend):
    counts: list[int] = []
    start = threading.Barrier(THREADS)

    def worker():
        start.wait()
        try:
            mine = [rate_counters.hit("rl:test:same-window", ttl=60, now=time.time()) for _ in range(HITS)]
        finally:
            connection.close()
        counts.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(counts) == list(range(1, THREADS * HITS + 1))


@pytest.mark.django_db
def test_rows_of_ended_windows_are_purged(settings, monkeypatch):
    settings.RATE_LIMIT_REDIS_URL = None
    monkeypatch.setattr(rate_counters, "_purger", rate_counters._Purger())
    now = time.time()
    RateLimitCounter.objects.create(window_key="rl:old", count=9, expires_at=int(now) - 1)

    rate_counters.hit("rl:new", ttl=60, now=now)

    assert list(RateLimitCounter.objects.values_list("window_key", "count")) == [("rl:new", 1)]


@pytest.mark.django_db
def test_a_limited_call_adds_one_query_on_the_database_and_none_on_redis(
    backend, acme, deploy, make_token, django_assert_num_queries
):
    manifest = cases_manifest()
    manifest["mcp"]["tools"][6]["rateLimit"] = {"calls": 100, "per": "hour"}  # listing
    deploy(acme, manifest)
    raw = make_token(acme, "reader")[1]

    def one_call():
        gw = authenticate("acme", f"Bearer {raw}")
        return tool_calls.call_tool(gw.tenant, gw.caller, "acme_cases_listing", {})

    one_call()  # warm: caches filled, last_used_at noted, old windows purged
    with django_assert_num_queries(2 + 1 + (1 if backend == "database" else 0)):  # auth, audit, count
        assert one_call().is_error is False
