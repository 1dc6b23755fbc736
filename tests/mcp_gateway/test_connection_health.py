"""Kept database connections on the gateway's threads: checked before reuse unless just used."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from mcp_gateway.protocol import concurrency
from tenants.models import Tenant


@pytest.fixture
def one_thread():
    pool = ThreadPoolExecutor(1)
    yield lambda fn: pool.submit(concurrency._with_connection_hygiene, fn).result()
    pool.submit(connections.close_all).result()
    pool.shutdown()


def counted_checks() -> list[str]:
    """Count this thread's health checks: Django asks ``is_usable`` for each."""
    connection = connections["default"]
    checks: list[str] = []
    usable = connection.is_usable

    def is_usable() -> bool:
        checks.append(connection.alias)
        return usable()

    connection.is_usable = is_usable
    return checks


def query() -> int:
    return Tenant.objects.count()


def test_a_connection_used_moments_ago_is_not_checked_again(transactional_db, one_thread):
    one_thread(query)
    checks = one_thread(counted_checks)

    one_thread(query)
    one_thread(query)

    assert checks == []


def test_a_connection_idle_past_the_window_is_checked_before_its_query(
    transactional_db, one_thread, monkeypatch
):
    one_thread(query)
    checks = one_thread(counted_checks)
    monkeypatch.setattr(concurrency, "HEALTHY_FOR_S", 0.0)

    one_thread(query)

    assert checks == ["default"]


def test_a_connection_that_failed_is_checked_again(transactional_db, one_thread):
    one_thread(query)
    checks = one_thread(counted_checks)

    def fail() -> None:
        with pytest.raises(Exception):  # noqa: B017, PT011 - any database error marks the connection
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT * FROM no_such_table")

    one_thread(fail)
    one_thread(query)

    assert "default" in checks
