"""Warm workers: one tenant's app version per worker, one call at a time, every per-call bound kept.

Through ``Sandbox.run`` with ``Invocation.warm_key`` (what ``dispatch.run_route`` sets for every route
without ``"isolation": "call"``), at each isolation tier; the attack suite (``test_attacks.py``) runs every
row in a warm worker too.
"""

import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from apps_runtime.sandbox import HandlerFailed, Invocation, Sandbox, SandboxLimits
from apps_runtime.sandbox.supervisor import default_per_tenant

from .bundles import HANDLER, refuse_data_calls, write_bundle
from .conftest import TIERS

# Module globals and the worker's pid: what a call can tell about the calls before it.
COUNTER = """
import os
CALLS = []

def handle(request):
    CALLS.append(request.body.get("who"))
    return {"seen": list(CALLS), "pid": os.getpid()}
"""


@pytest.fixture(params=TIERS, ids=lambda tier: f"tier{tier}")
def box(request, sandbox_at):
    """The shared sandbox forced to each tier: every row holds at every tier."""
    return sandbox_at(request.param)


@pytest.fixture
def make_bundle(bundles_root):
    made = []

    def make(source: str = COUNTER, **files: str) -> str:
        path = Path(tempfile.mkdtemp(prefix="app-", dir=bundles_root))
        path.chmod(0o755)
        made.append(path)
        return write_bundle(path, {HANDLER: source, **files})

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def call(
    box, bundle, key="t1:a1:v1", tenant="t1", body=None, broker=refuse_data_calls, handler=HANDLER, **limits
):
    invocation = Invocation(bundle, handler, {"body": body or {}}, SandboxLimits(**limits), tenant, key)
    return box.run(invocation, broker).body


def test_module_globals_persist_between_calls_of_one_app_version(box, make_bundle):
    bundle = make_bundle()
    first = call(box, bundle, body={"who": "alice"})
    second = call(box, bundle, body={"who": "bob"})
    assert first["seen"] == ["alice"]
    assert second == {"seen": ["alice", "bob"], "pid": first["pid"]}


def test_calls_without_a_warm_key_share_nothing(box, make_bundle):
    bundle = make_bundle()
    assert call(box, bundle, key=None, body={"who": "alice"})["seen"] == ["alice"]
    assert call(box, bundle, key=None, body={"who": "bob"})["seen"] == ["bob"]


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"key": "t1:a1:v2"}, id="another-version"),
        pytest.param({"key": "t1:a2:v1"}, id="another-app"),
        pytest.param({"key": "t2:a1:v1", "tenant": "t2"}, id="another-tenant"),
    ],
)
def test_state_of_one_app_version_is_invisible_to_another_version_app_and_tenant(box, make_bundle, other):
    bundle = make_bundle()
    key = f"t1:{bundle}:v1"  # unique per test: no worker of an earlier test answers
    mine = call(box, bundle, key=key, body={"who": "secret-holder"})
    theirs = call(box, bundle, **{**other, "key": other["key"] + bundle}, body={"who": "prober"})
    assert theirs["seen"] == ["prober"]
    assert theirs["pid"] != mine["pid"] or box.tier_level == 1  # pids are per namespace at tier 1
    assert call(box, bundle, key=key, body={"who": "again"})["seen"] == ["secret-holder", "again"]


def test_two_handlers_of_one_version_share_the_worker_and_keep_their_own_globals(box, make_bundle):
    bundle = make_bundle(
        **{"server/other.py": "N = []\ndef handle(request):\n    N.append(1)\n    return len(N)\n"}
    )
    key = f"two:{bundle}"
    first = call(box, bundle, key=key, body={"who": "a"})
    assert [call(box, bundle, key=key, handler="server/other.py") for _ in range(2)] == [1, 2]
    assert call(box, bundle, key=key, body={"who": "b"}) == {"seen": ["a", "b"], "pid": first["pid"]}


def test_the_scratch_dir_is_emptied_between_calls(box, make_bundle):
    bundle = make_bundle(
        """
        import os

        def handle(request):
            before = sorted(os.listdir("."))
            with open("left-behind.txt", "w") as f:
                f.write("x" * 1000)
            os.mkdir("a-dir")
            return before
        """
    )
    key = f"scratch:{bundle}"
    assert call(box, bundle, key=key) == []
    assert call(box, bundle, key=key) == []


def test_a_timeout_kills_the_worker_and_the_next_call_gets_a_fresh_one(box, make_bundle):
    bundle = make_bundle(
        """
        CALLS = []

        def handle(request):
            CALLS.append(1)
            if request.body.get("hang"):
                while True:
                    pass
            return len(CALLS)
        """
    )
    key = f"hang:{bundle}"
    assert call(box, bundle, key=key, timeout_ms=300) == 1
    recycled = box.pool_stats()["recycles"]["failure"]
    with pytest.raises(HandlerFailed) as failed:
        call(box, bundle, key=key, body={"hang": True}, timeout_ms=300)
    assert failed.value.kind == "handler_timeout"
    assert box.pool_stats()["recycles"]["failure"] == recycled + 1
    assert call(box, bundle, key=key, timeout_ms=300) == 1  # a fresh worker: the hung one's globals are gone


def test_a_handler_error_retires_the_worker(box, make_bundle):
    bundle = make_bundle(
        """
        CALLS = []

        def handle(request):
            CALLS.append(1)
            if request.body.get("fail"):
                raise RuntimeError("boom")
            return len(CALLS)
        """
    )
    key = f"fail:{bundle}"
    assert call(box, bundle, key=key) == 1
    with pytest.raises(HandlerFailed) as failed:
        call(box, bundle, key=key, body={"fail": True})
    assert failed.value.kind == "handler_error"
    assert call(box, bundle, key=key) == 1


def test_a_worker_cannot_fork_a_grandchild(box, make_bundle):
    bundle = make_bundle(
        """
        import errno, os

        def handle(request):
            try:
                pid = os.fork()
            except OSError as exc:
                return errno.errorcode[exc.errno]
            if pid == 0:
                os._exit(0)
            return "forked"
        """
    )
    key = f"fork:{bundle}"
    assert call(box, bundle, key=key) in ("EPERM", "EAGAIN")
    assert call(box, bundle, key=key) in ("EPERM", "EAGAIN")


def test_each_call_keeps_its_own_data_call_bound(box, make_bundle):
    bundle = make_bundle(
        """
        from platform_sdk import LimitExceeded

        def handle(request):
            done = 0
            try:
                for _ in range(5):
                    request.records.get("c", "x")
                    done += 1
            except LimitExceeded:
                pass
            return done
        """
    )
    key = f"data:{bundle}"

    def broker(op, args):
        return {"id": args["id"]}

    assert call(box, bundle, key=key, broker=broker, max_data_calls=3) == 3
    assert call(box, bundle, key=key, broker=broker, max_data_calls=3) == 3


def test_a_request_for_an_ended_call_is_refused_and_kills_the_worker(box, make_bundle):
    """A timer the handler set sends a data call after its call ended: the caller of that call is gone, so
    nobody answers it; the worker is retired and the next call runs in a fresh one.
    """
    bundle = make_bundle(
        """
        import os, signal, struct

        CALLS = []

        def late(signum, frame):
            frame = b'{"op": "records.get", "args": {"collection": "c", "id": "stray"}}'
            os.write(3, struct.pack(">I", len(frame)) + frame)

        def handle(request):
            CALLS.append(1)
            if len(CALLS) == 1:
                signal.signal(signal.SIGALRM, late)
                signal.setitimer(signal.ITIMER_REAL, 0.05)  # fires while the worker waits for a call
            return len(CALLS)
        """
    )
    key = f"stray:{bundle}"
    answered = []

    def broker(op, args):
        answered.append(args)
        return None

    assert call(box, bundle, key=key, broker=broker) == 1
    before = box.pool_stats()["recycles"]["stray"]
    deadline = time.monotonic() + 5
    while box.pool_stats()["recycles"]["stray"] == before:
        assert time.monotonic() < deadline, "the stray request was never noticed"
    assert call(box, bundle, key=key, broker=broker) == 1  # a fresh worker
    assert answered == []


def test_a_thread_left_running_after_a_call_retires_the_worker(box, make_bundle):
    """Threads are bounded per call: one that outlives its call would outlive the call's time limit."""
    bundle = make_bundle(
        """
        import threading, time

        CALLS = []

        def handle(request):
            CALLS.append(1)
            if request.body.get("leave_a_thread"):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            return len(CALLS)
        """
    )
    if box.tier_level == 3:
        pytest.skip("tier 3 allows no thread")
    key = f"threads:{bundle}"
    assert call(box, bundle, key=key) == 1
    before = box.pool_stats()["recycles"]["threads"]
    assert call(box, bundle, key=key, body={"leave_a_thread": True}) == 2
    assert box.pool_stats()["recycles"]["threads"] == before + 1
    assert call(box, bundle, key=key) == 1  # a fresh worker, without the thread


def test_drain_retires_the_workers_of_an_app(box, make_bundle):
    bundle = make_bundle()
    key = f"drain:{bundle}:v1"
    call(box, bundle, key=key, body={"who": "a"})
    assert box.drain_workers(f"drain:{bundle}:") == 1
    assert call(box, bundle, key=key, body={"who": "b"})["seen"] == ["b"]


def test_workers_are_recycled_after_max_calls_idle_time_and_memory_growth(bundles_root, make_bundle):
    bundle = make_bundle(
        """
        KEEP = []

        def handle(request):
            KEEP.append(b"x" * (request.body.get("grow", 0) * 1024 * 1024))
            return len(KEEP)
        """
    )
    with_calls = Sandbox(bundle_root=str(bundles_root), warm_max_calls=2, warm_max_growth_mb=4)
    with_idle = Sandbox(bundle_root=str(bundles_root), warm_idle_s=1e-6)
    try:
        assert [call(with_calls, bundle) for _ in range(3)] == [1, 2, 1]
        assert with_calls.pool_stats()["recycles"]["calls"] == 1
        assert call(with_calls, bundle, body={"grow": 8}) == 2
        assert with_calls.pool_stats()["recycles"]["memory"] == 1
        assert call(with_calls, bundle) == 1

        assert [call(with_idle, bundle) for _ in range(2)] == [1, 1]
        assert with_idle.pool_stats()["recycles"]["idle"] >= 1
    finally:
        with_calls.close()
        with_idle.close()


def test_the_pool_is_bounded_per_tenant_and_per_host_evicting_the_least_recently_used(
    bundles_root, make_bundle
):
    bundle = make_bundle()
    small = Sandbox(bundle_root=str(bundles_root), warm_workers=2, warm_workers_per_tenant=1)
    try:
        call(small, bundle, key="t1:a:1", tenant="t1")
        call(small, bundle, key="t1:b:1", tenant="t1")  # evicts t1's first: one per tenant
        assert small.pool_stats()["recycles"]["evicted"] == 1
        call(small, bundle, key="t2:a:1", tenant="t2")
        call(small, bundle, key="t3:a:1", tenant="t3")  # two in all: evicts t1's, the least recently used
        stats = small.pool_stats()
        assert (stats["workers"], stats["recycles"]["evicted"]) == (2, 2)
        assert call(small, bundle, key="t2:a:1", tenant="t2", body={"who": "x"})["seen"] == [None, "x"]
    finally:
        small.close()


def test_pool_stats_count_starts_and_calls(bundles_root, make_bundle):
    bundle = make_bundle()
    fresh = Sandbox(bundle_root=str(bundles_root))
    try:
        for _ in range(3):
            call(fresh, bundle)
        call(fresh, bundle, key=None)
        stats = fresh.pool_stats()
        assert {
            k: stats[k] for k in ("workers", "idle", "busy", "starts", "warm_calls", "per_call_calls")
        } == {
            "workers": 1,
            "idle": 1,
            "busy": 0,
            "starts": 1,
            "warm_calls": 3,
            "per_call_calls": 1,
        }
    finally:
        fresh.close()
    off = Sandbox(bundle_root=str(bundles_root), warm_workers=0)
    try:
        call(off, bundle)
        assert off.pool_stats()["workers"] == 0
    finally:
        off.close()


def test_the_per_tenant_concurrency_cap_scales_with_the_host():
    assert default_per_tenant(1) == 4
    assert default_per_tenant(16) == 32
    assert Sandbox()._gate.limit == default_per_tenant()


def test_a_call_never_waits_for_a_slot_an_idle_worker_holds(bundles_root, make_bundle):
    bundle = make_bundle('def handle(request):\n    request.records.get("gate", "wait")\n    return 1\n')
    box = Sandbox(bundle_root=str(bundles_root), max_concurrent=2, warm_workers=1, queue_timeout_ms=20_000)
    arrived, release = threading.Semaphore(0), threading.Event()

    def gate(op, args):
        arrived.release()
        assert release.wait(30)
        return {}

    try:
        release.set()
        call(box, bundle, broker=gate)  # a warm worker, now idle, holding one of the two slots
        release.clear()
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = [pool.submit(call, box, bundle, key=None, broker=gate) for _ in range(2)]
            assert all(arrived.acquire(timeout=30) for _ in range(3))  # the warm call's, then both at once
            release.set()
            assert [run.result() for run in runs] == [1, 1]
        assert box.pool_stats()["recycles"]["evicted"] == 1
    finally:
        release.set()
        box.close()
