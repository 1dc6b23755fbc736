"""Rows of concurrent calls are committed together, each before its call returns, and one refused
row fails only its own call."""

from __future__ import annotations

import threading

import pytest
from django.db import DatabaseError, connections

from mcp_gateway.audit_log import GroupCommit, group_commit, record_call
from mcp_gateway.models import ToolCallAudit
from tenants.callers import Caller

THREADS = 12
ROWS_EACH = 10


def _in_threads(work, count: int) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(n: int) -> None:
        start.wait()
        try:
            work(n)
        except BaseException as err:  # collected for the assertion
            errors.append(err)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


@pytest.mark.django_db(transaction=True)
def test_each_concurrent_row_is_committed_when_its_write_returns(acme):
    caller = Caller(tenant_id=acme.pk, is_member=True)
    seen_missing: list[str] = []

    def work(n: int) -> None:
        for i in range(ROWS_EACH):
            name = f"t{n}_{i}"
            record_call(caller, name, {}, outcome="ok", duration_ms=1.0)
            # Read on this thread's own connection, outside any transaction: committed already.
            if not ToolCallAudit.all_tenants.filter(wire_name=name).exists():
                seen_missing.append(name)

    assert _in_threads(work, THREADS) == []
    assert seen_missing == []
    assert ToolCallAudit.objects.for_tenant(acme).count() == THREADS * ROWS_EACH
    assert group_commit._pending == [] and group_commit._writing is False


@pytest.mark.django_db(transaction=True)
def test_a_refused_row_fails_its_own_call_only(acme):
    good = Caller(tenant_id=acme.pk, is_member=True)
    missing_tenant = Caller(tenant_id=acme.pk + 10_000, is_member=True)  # the foreign key refuses it
    writer = GroupCommit(max_batch=64)
    failed: list[int] = []

    def work(n: int) -> None:
        caller = missing_tenant if n == 0 else good
        values = {
            "tenant_id": caller.tenant_id,
            "wire_name": f"w{n}",
            "outcome": "ok",
            "duration_ms": 1.0,
            "arguments_sha256": "0" * 64,
        }
        try:
            writer.write(connections["default"], ToolCallAudit(**values))
        except DatabaseError:
            failed.append(n)

    assert _in_threads(work, THREADS) == []
    assert failed == [0]
    assert set(ToolCallAudit.all_tenants.values_list("wire_name", flat=True)) == {
        f"w{n}" for n in range(1, THREADS)
    }


def test_the_queue_is_bounded():
    writer = GroupCommit(max_batch=4, max_pending=8)
    assert writer.max_pending == 8 and writer.max_batch <= writer.max_pending
