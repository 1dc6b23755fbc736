"""Fair share: a tenant's slow handlers take at most ``max_concurrent_per_tenant`` slots; the rest wait,
then fail with a 503 and an error id. Other tenants are not held up."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from apps_runtime.sandbox import HandlerFailed, Invocation, Sandbox

from .bundles import refuse_data_calls, write_bundle

SLOW = """
def handle(request):
    request.records.get("gate", "wait")  # held until the test releases it
    return "slow done"
"""
FAST = "def handle(request):\n    return 'fast done'\n"


@pytest.fixture
def fair_sandbox(bundles_root, tmp_path):
    box = Sandbox(
        scratch_root=str(tmp_path / "scratch"),
        bundle_root=str(bundles_root),
        max_concurrent_per_tenant=4,
        queue_timeout_ms=300,
    )
    yield box
    box.close()


@pytest.fixture
def handlers(bundle_dir):
    write_bundle(bundle_dir, {"slow.py": SLOW, "fast.py": FAST})

    def invocation(name: str, tenant: str | None) -> Invocation:
        return Invocation(str(bundle_dir), f"{name}.py", {}, tenant_key=tenant)

    return invocation


class Gate:
    """A broker that holds every slow handler inside its data call until ``release()``."""

    def __init__(self):
        self.released = threading.Event()
        self.inside = threading.Semaphore(0)

    def __call__(self, op, args):
        self.inside.release()
        assert self.released.wait(20)
        return {}

    def wait_inside(self, count: int) -> None:
        for _ in range(count):
            assert self.inside.acquire(timeout=10), "a slow handler did not start"

    def release(self) -> None:
        self.released.set()


def test_one_tenants_slow_handlers_do_not_block_another_tenant(fair_sandbox, handlers):
    gate = Gate()
    with ThreadPoolExecutor(max_workers=6) as pool:
        slow = [pool.submit(fair_sandbox.run, handlers("slow", "tenant-a"), gate) for _ in range(4)]
        gate.wait_inside(4)  # tenant A has all four of its slots busy

        started = time.monotonic()
        other = fair_sandbox.run(handlers("fast", "tenant-b"), refuse_data_calls)
        elapsed = time.monotonic() - started

        with pytest.raises(HandlerFailed) as waited_too_long:
            fair_sandbox.run(handlers("fast", "tenant-a"), refuse_data_calls)
        gate.release()
        assert [f.result().body for f in slow] == ["slow done"] * 4

    assert other.body == "fast done"
    assert elapsed < 0.3  # tenant B did not queue behind tenant A
    failure = waited_too_long.value
    assert failure.kind == "sandbox_unavailable"
    assert failure.http_status == 503
    assert failure.error_id.startswith("err_")


def test_a_queued_run_goes_ahead_when_a_slot_frees_up(bundles_root, tmp_path, handlers):
    box = Sandbox(
        scratch_root=str(tmp_path / "scratch"),
        bundle_root=str(bundles_root),
        max_concurrent_per_tenant=1,
        queue_timeout_ms=5000,
    )
    gate = Gate()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            first = pool.submit(box.run, handlers("slow", "tenant-a"), gate)
            gate.wait_inside(1)
            queued = pool.submit(box.run, handlers("fast", "tenant-a"), refuse_data_calls)
            time.sleep(0.2)
            assert not queued.done()  # waiting for tenant A's only slot
            gate.release()
            assert first.result().body == "slow done"
            assert queued.result(timeout=10).body == "fast done"
    finally:
        box.close()


def test_runs_without_a_tenant_key_are_not_counted(fair_sandbox, handlers):
    gate = Gate()
    with ThreadPoolExecutor(max_workers=6) as pool:
        slow = [pool.submit(fair_sandbox.run, handlers("slow", None), gate) for _ in range(6)]
        gate.wait_inside(6)  # more than max_concurrent_per_tenant, all running at once
        gate.release()
        assert [f.result().body for f in slow] == ["slow done"] * 6


def test_slots_are_given_back_when_a_run_fails(fair_sandbox, bundle_dir):
    write_bundle(bundle_dir, {"boom.py": "def handle(request):\n    raise RuntimeError('boom')\n"})
    boom = Invocation(str(bundle_dir), "boom.py", {}, tenant_key="tenant-a")

    for _ in range(6):
        with pytest.raises(HandlerFailed):
            fair_sandbox.run(boom, refuse_data_calls)

    assert fair_sandbox._gate.running("tenant-a") == 0


def test_invalid_fair_share_options_are_refused():
    with pytest.raises(ValueError):
        Sandbox(max_concurrent_per_tenant=0)
    with pytest.raises(ValueError):
        Sandbox(queue_timeout_ms=-1)
