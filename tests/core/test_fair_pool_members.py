"""Inside a tenant, the fair pool takes its members' items in turn (issue 35: one member's backlog
held another member's task of the same tenant back)."""

import threading

from core.fair_pool import FairPool


def test_a_members_backlog_does_not_hold_another_members_item_back():
    pool = FairPool("test-members", workers=1, share=1)
    running, gate, order = threading.Event(), threading.Event(), []

    def item(name: str) -> None:
        if name == "a1":
            running.set()
            gate.wait(10)
        order.append(name)

    pool.submit("tenant", item, "a1", member="a")
    assert running.wait(10)
    for n in range(2, 6):
        pool.submit("tenant", item, f"a{n}", member="a")
    pool.submit("tenant", item, "b1", member="b")
    assert pool.queued("tenant") == 5
    gate.set()
    assert pool.wait_idle(10)
    # b1 runs next (a1 was running when it arrived), not after all of a's backlog.
    assert order == ["a1", "b1", "a2", "a3", "a4", "a5"]


def test_items_without_a_member_keep_their_order():
    pool = FairPool("test-plain", workers=1, share=1)
    gate, order = threading.Event(), []

    def item(n: int) -> None:
        gate.wait(10)
        order.append(n)

    for n in range(5):
        pool.submit("tenant", item, n)
    gate.set()
    assert pool.wait_idle(10)
    assert order == [0, 1, 2, 3, 4]
