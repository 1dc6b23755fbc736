"""Pre-forked children: each call slot keeps a child forked (and partly confined) ahead of its next call, so
fork and hardening leave the call's path; each child still serves exactly one call and exits.
"""

import os
import time

import pytest

from apps_runtime.sandbox import Invocation, Sandbox

from .bundles import HANDLER, refuse_data_calls, write_bundle
from .conftest import TIERS

REPORT_PID = """
import os

def handle(request):
    return os.getpid()
"""
WAIT_S = 10.0


def _children(pid: int) -> set[int]:
    """Host pids of ``pid``'s children."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # exited meanwhile
        if int(fields.get("PPid", "0")) == pid:
            found.add(int(entry))
    return found


def _pid_inside(host_pid: int) -> int:
    """The pid as the process itself sees it (in the sandbox's PID namespace at tier 1)."""
    with open(f"/proc/{host_pid}/status") as f:
        for line in f:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    raise AssertionError(f"no NSpid for {host_pid}")


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"not within {WAIT_S} s: {what}")


@pytest.fixture
def one_slot_box(bundles_root, tmp_path):
    boxes = []

    def make(level: int, **options) -> Sandbox:
        box = Sandbox(
            bundle_root=str(bundles_root),
            scratch_root=str(tmp_path),
            tier=level,
            min_tier=4,
            max_concurrent=1,
            **options,
        )
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


@pytest.mark.parametrize("tier", TIERS)
def test_the_next_call_runs_in_a_child_forked_before_it_arrived_and_each_child_serves_one_call(
    one_slot_box, bundle_dir, tier
):
    box = one_slot_box(tier)
    write_bundle(bundle_dir, {HANDLER: REPORT_PID})
    invocation = Invocation(str(bundle_dir), HANDLER, {})
    first = box.run(invocation, refuse_data_calls).body

    # The slot's next child is forked after the call, while nothing waits for it, and the one that served
    # the call is gone.
    spare = _wait_for(
        lambda: _children(box.zygote_pid) if len(_children(box.zygote_pid)) == 1 else None,
        "the zygote holds one spare child",
    )
    (spare_pid,) = spare
    spare_pid = _pid_inside(spare_pid)
    second = box.run(invocation, refuse_data_calls).body
    third = box.run(invocation, refuse_data_calls).body

    assert second == spare_pid
    assert len({first, second, third}) == 3


def test_without_prefork_the_child_is_forked_when_the_call_comes(one_slot_box, bundle_dir):
    box = one_slot_box(2, prefork=0)
    write_bundle(bundle_dir, {HANDLER: REPORT_PID})
    invocation = Invocation(str(bundle_dir), HANDLER, {})
    box.run(invocation, refuse_data_calls)

    _wait_for(lambda: not _children(box.zygote_pid), "the zygote holds no child between calls")
    assert isinstance(box.run(invocation, refuse_data_calls).body, int)


def test_only_prefork_slots_keep_a_spare_child(bundles_root, bundle_dir, tmp_path):
    box = Sandbox(
        bundle_root=str(bundles_root), scratch_root=str(tmp_path), tier=2, max_concurrent=4, prefork=2
    )
    try:
        write_bundle(bundle_dir, {HANDLER: REPORT_PID})
        invocation = Invocation(str(bundle_dir), HANDLER, {})
        pids = {box.run(invocation, refuse_data_calls).body for _ in range(5)}

        _wait_for(lambda: len(_children(box.zygote_pid)) == 2, "the zygote holds two spare children")
        assert len(pids) == 5
    finally:
        box.close()
