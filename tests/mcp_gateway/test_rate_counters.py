"""Window counters: atomic under concurrency on real PostgreSQL (or SQLite) and real Redis; their cost."""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid

import pytest
from django.db import connection

from mcp_gateway.limits import rate_counters
from mcp_gateway.models import RateLimitCounter
from mcp_gateway.tools.call import calls as tool_calls
from mcp_gateway.transport.auth import verify_bearer
from tests.mcp_gateway.test_query_counts import AUDIT, AUTH
from tests.support.apps import cases_manifest
from tests.support.rate_hits import hit_in_process
from tests.support.servers import database_url

THREADS, PROCESSES, HITS = 8, 3, 25


@pytest.fixture
def key():
    # A key of its own: other test runs on this machine (or CI job) may share the Redis database.
    return f"rl-test:{uuid.uuid4().hex}"


@pytest.mark.django_db(transaction=True)
def test_concurrent_hits_each_see_a_distinct_count(rate_backend, key):
    counts: list[int] = []
    start = threading.Barrier(THREADS)

    def worker():
        start.wait()
        try:
            mine = [rate_counters.hit(key, ttl=60, now=time.time()) for _ in range(HITS)]
        finally:
            connection.close()
        counts.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(counts) == list(range(1, THREADS * HITS + 1))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_server_processes_share_one_count(rate_backend, settings, key):
    env = {
        "DATABASE_URL": database_url(),
        "RATE_LIMIT_REDIS_URL": settings.RATE_LIMIT_REDIS_URL or "",
        "DJANGO_SETTINGS_MODULE": "lowcode_platform.settings",
    }
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    processes = [
        ctx.Process(target=hit_in_process, args=(env, key, HITS, barrier, results)) for _ in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    counts = [count for _ in processes for count in results.get(timeout=120)]
    for process in processes:
        process.join()

    assert sorted(counts) == list(range(1, PROCESSES * HITS + 1))


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
    rate_backend, acme, deploy, make_token, django_assert_num_queries, monkeypatch
):
    # A fresh purger: the warm call purges, and the next purge is a minute away from the counted one.
    monkeypatch.setattr(rate_counters, "_purger", rate_counters._Purger())
    manifest = cases_manifest()
    manifest["mcp"]["tools"][6]["rateLimit"] = {"calls": 100, "per": "hour"}  # listing
    deploy(acme, manifest)
    raw = make_token(acme, "reader")[1]

    def one_call():
        gw, _audience = verify_bearer("acme", raw)
        return tool_calls.call_tool(gw.tenant, gw.caller, "acme_cases_listing", {})

    one_call()  # warm: caches filled, last_used_at noted, ended windows purged
    # auth (tenant with token), audit, and the count where the database keeps it
    with django_assert_num_queries(AUTH + AUDIT + (1 if rate_backend == "database" else 0)):
        assert one_call().is_error is False
