"""Call slots: each call in flight has a uid of its own (the platform runs as root here) and a bounded
scratch space; a sandbox runs at most ``max_concurrent`` calls at once and never shares a uid with another
sandbox on the host.
"""

import os
import pwd
import random
import threading

import pytest

from apps_runtime.sandbox import HandlerFailed, Invocation, Sandbox, SandboxUnavailable
from apps_runtime.sandbox.slots import UID_BLOCK

from .bundles import write_bundle

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="per-call uids exist only when the platform runs as root, as CI does"
)

WAITER = """
import os

def handle(request):
    request.records.get("uid", str(os.getuid()))
    request.records.get("wait", "")  # answered when the test lets the call finish
    return os.getuid()
"""


class HeldCalls:
    """Calls that report their uid, then wait until ``release()``."""

    def __init__(self, box: Sandbox, bundle_dir):
        write_bundle(bundle_dir, {"server/wait.py": WAITER})
        self.invocation = Invocation(str(bundle_dir), "server/wait.py", {})
        self.box = box
        self.uids: list[int] = []
        self.results: list = []
        self._reported = threading.Semaphore(0)
        self._release = threading.Event()
        self._threads: list[threading.Thread] = []

    def _broker(self, op, args):
        if args["collection"] == "uid":
            self.uids.append(int(args["id"]))
            self._reported.release()
        else:
            self._release.wait(10)
        return {}

    def _run(self) -> None:
        try:
            self.results.append(self.box.run(self.invocation, self._broker).body)
        except HandlerFailed as failed:
            self.results.append(failed)

    def start(self, count: int) -> None:
        for _ in range(count):
            thread = threading.Thread(target=self._run)
            thread.start()
            self._threads.append(thread)
            assert self._reported.acquire(timeout=10), "the call did not start"

    def release(self) -> None:
        self._release.set()
        for thread in self._threads:
            thread.join(10)


def _private_uid_range(blocks: int) -> tuple[int, int]:
    """A range no other test run on this host uses at the same time (far from the default one)."""
    first = (0x71000000 // UID_BLOCK + random.randrange(100_000) * blocks) * UID_BLOCK
    return first, first + blocks * UID_BLOCK - 1


@pytest.fixture
def make_sandbox(bundles_root):
    boxes = []

    def make(**options) -> Sandbox:
        box = Sandbox(bundle_root=str(bundles_root), **options)
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


def test_concurrent_calls_run_as_different_uids(make_sandbox, bundle_dir):
    held = HeldCalls(make_sandbox(), bundle_dir)
    try:
        held.start(3)
    finally:
        held.release()

    assert len(set(held.uids)) == 3
    assert sorted(held.results) == sorted(held.uids)


def test_a_call_beyond_max_concurrent_waits_and_fails_as_unavailable_when_no_slot_frees_up(
    make_sandbox, bundle_dir
):
    box = make_sandbox(max_concurrent=1, queue_timeout_ms=200)
    held = HeldCalls(box, bundle_dir)
    try:
        held.start(1)
        with pytest.raises(HandlerFailed) as failed:
            box.run(held.invocation, held._broker)
    finally:
        held.release()

    assert failed.value.kind == "sandbox_unavailable"
    assert failed.value.http_status == 503
    assert held.results == held.uids  # the held call finished normally
    write_bundle(bundle_dir, {"server/one.py": "def handle(request):\n    return 1\n"})
    assert box.run(Invocation(str(bundle_dir), "server/one.py", {}), lambda op, args: {}).body == 1


def test_sandboxes_on_one_host_never_claim_the_same_uids(make_sandbox, bundle_dir):
    uid_range = _private_uid_range(blocks=2)  # room for one sandbox of up to 31 slots, not two
    first = make_sandbox(uid_range=uid_range, max_concurrent=16)
    first.start()

    second = make_sandbox(uid_range=uid_range, max_concurrent=16)
    with pytest.raises(SandboxUnavailable, match="fewer than 17 free uids"):
        second.start()

    first.close()
    third = make_sandbox(uid_range=uid_range, max_concurrent=16)
    assert third.start()  # the uids are free again once their sandbox is gone
    write_bundle(bundle_dir, {"server/uid.py": "import os\n\ndef handle(request):\n    return os.getuid()\n"})
    uid = third.run(Invocation(str(bundle_dir), "server/uid.py", {}), lambda op, args: {}).body
    assert uid_range[0] <= uid <= uid_range[1]


def test_uids_of_the_user_database_are_never_claimed(make_sandbox):
    nobody = pwd.getpwnam("nobody").pw_uid
    block = nobody // UID_BLOCK * UID_BLOCK
    box = make_sandbox(uid_range=(block, block + UID_BLOCK - 1), max_concurrent=1)

    with pytest.raises(SandboxUnavailable, match="free uids"):
        box.start()
