"""``core.tenant_gate.TenantGate``: at most N in flight per tenant, a bounded wait, a bounded table."""

from __future__ import annotations

import threading

import pytest

from core.tenant_gate import TenantGate


def test_a_tenant_at_its_limit_waits_in_vain_while_another_tenant_enters():
    gate = TenantGate(1)
    assert gate.enter("acme", 0)
    assert gate.enter("acme", 0.01) is False
    assert gate.enter("other", 0)
    assert (gate.running("acme"), gate.running("other")) == (1, 1)


def test_a_slot_freed_by_another_thread_lets_the_waiter_in():
    gate = TenantGate(1)
    gate.enter("acme", 0)
    waiting = threading.Event()
    entered: list[bool] = []

    def wait_for_slot() -> None:
        waiting.set()
        entered.append(gate.enter("acme", 30))

    thread = threading.Thread(target=wait_for_slot)
    thread.start()
    waiting.wait(30)
    gate.leave("acme")
    thread.join(30)
    assert entered == [True] and gate.running("acme") == 1


def test_the_table_holds_only_tenants_with_something_in_flight():
    gate = TenantGate(2)
    for n in range(100):
        with gate.slot(n, 0) as entered:
            assert entered and gate.tenants() == 1
    assert gate.tenants() == 0


def test_a_slot_not_had_in_time_is_not_given_back():
    gate = TenantGate(1)
    with gate.slot("acme", 0), gate.slot("acme", 0) as second:
        assert second is False
        assert gate.running("acme") == 1
    assert gate.running("acme") == 0


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_a_limit_is_a_positive_int(limit):
    with pytest.raises(ValueError):
        TenantGate(limit)
