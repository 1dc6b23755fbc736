"""A handler cannot make the host hold memory past its bounds: in-memory files, shared memory, its scratch
filesystem, stuffed pipes and sockets are refused or bounded, and a warm worker that keeps any of them past
its call is retired, so the host's shared memory (``/proc/meminfo`` Shmem) is back where it was once the call
ends.

The host figure is the whole machine's, so other processes move it too: the margin (32 MiB) is far below
what the attack held before (960 MiB in one call) and above the noise of a shared test host.
"""

import time

import pytest

from apps_runtime.sandbox import Invocation, SandboxLimits

from .bundles import HANDLER, refuse_data_calls, write_bundle
from .conftest import TIERS

MIB = 1024 * 1024
MARGIN_KB = 32 * 1024

# Everything a handler might hold memory with, kept in module globals so a warm worker would keep it.
HOARD = """
import errno, fcntl, mmap, os

HELD = []

def _try(name, action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

def _memfds():
    for index in range(40):
        fd = os.memfd_create(f"hoard{index}")
        HELD.append(fd)
        os.ftruncate(fd, 16 << 20)
        for offset in range(0, 16 << 20, 1 << 20):
            os.pwrite(fd, b"m" * (1 << 20), offset)

def _posix_shm():
    fd = os.open("/dev/shm/hoard", os.O_RDWR | os.O_CREAT, 0o600)
    HELD.append(fd)
    os.unlink("/dev/shm/hoard")
    os.pwrite(fd, b"s" * (16 << 20), 0)

def _sysv_shm():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0, 64 << 20, 0o1600) < 0:
        raise OSError(ctypes.get_errno(), "shmget")

def _grow_pipe():
    read_end, write_end = os.pipe()
    HELD.extend((read_end, write_end))
    fcntl.fcntl(write_end, 1031, 1 << 20)  # F_SETPIPE_SZ

def _stuff_pipes():
    for _ in range(8):
        read_end, write_end = os.pipe()
        HELD.extend((read_end, write_end))
        os.set_blocking(write_end, False)
        try:
            while True:
                os.write(write_end, b"p" * 65536)
        except BlockingIOError:
            pass

def _grow_socket():
    import socket
    sender, receiver = socket.socketpair()
    HELD.extend((sender, receiver))
    sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)

def _stuff_sockets():
    import socket
    for _ in range(4):
        sender, receiver = socket.socketpair()
        HELD.extend((sender, receiver))
        sender.setblocking(False)
        try:
            while True:
                sender.send(b"u" * 65536)
        except BlockingIOError:
            pass

def _fill_scratch_and_keep_it():
    fd = os.open("kept", os.O_RDWR | os.O_CREAT, 0o600)
    HELD.append(fd)
    os.unlink("kept")
    os.write(fd, b"t" * (48 << 20))

def handle(request):
    outcome = {
        "memfd": _try("memfd", _memfds),
        "posix_shm": _try("posix_shm", _posix_shm),
        "sysv_shm": _try("sysv_shm", _sysv_shm),
        "grow_pipe": _try("grow_pipe", _grow_pipe),
        "stuff_pipes": _try("stuff_pipes", _stuff_pipes),
        "grow_socket": _try("grow_socket", _grow_socket),
        "stuff_sockets": _try("stuff_sockets", _stuff_sockets),
        "scratch": _try("scratch", _fill_scratch_and_keep_it),
    }
    return {"outcome": outcome, "pid": os.getpid(), "held": len(HELD)}
"""

# What seccomp and Landlock refuse at tiers 1-2 (tier 3 has neither: only the retirement bounds it).
REFUSED = {
    1: {
        "memfd": "EPERM",
        "posix_shm": "EACCES",
        "sysv_shm": "EPERM",
        "grow_pipe": "EPERM",
        "grow_socket": "EPERM",
    },
    2: {
        "memfd": "EPERM",
        "posix_shm": "EACCES",
        "sysv_shm": "EPERM",
        "grow_pipe": "EPERM",
        "grow_socket": "EPERM",
    },
    3: {},
}


def _shmem_kb() -> int:
    with open("/proc/meminfo") as meminfo:
        return next(int(line.split()[1]) for line in meminfo if line.startswith("Shmem:"))


def _settled_shmem_kb(ceiling_kb: int, timeout_s: float = 20.0) -> int:
    """The host's Shmem once the retired worker's memory is freed (its kill is asynchronous), at most
    ``timeout_s`` later: the first reading at or under ``ceiling_kb``, else the last one.
    """
    deadline = time.monotonic() + timeout_s
    reading = _shmem_kb()
    while reading > ceiling_kb and time.monotonic() < deadline:
        time.sleep(0.05)
        reading = _shmem_kb()
    return reading


@pytest.mark.parametrize("tier", TIERS, ids=lambda tier: f"tier{tier}")
def test_a_hoarding_handler_leaves_the_hosts_shared_memory_where_it_was(tier, sandbox_at, bundle_dir):
    box = sandbox_at(tier)
    bundle = write_bundle(bundle_dir, {HANDLER: HOARD})
    invocation = Invocation(bundle, HANDLER, {}, SandboxLimits(), "hoarder", f"hoarder:{bundle}:1")
    held_before = box.pool_stats()["recycles"]["held"]
    before_kb = _shmem_kb()

    first = box.run(invocation, refuse_data_calls).body
    after_kb = _settled_shmem_kb(before_kb + MARGIN_KB)
    second = box.run(invocation, refuse_data_calls).body

    for attack, code in REFUSED[tier].items():
        assert first["outcome"][attack] == code, (attack, first["outcome"])
    assert first["held"] > 0  # it did keep pipes and a scratch file open...
    assert box.pool_stats()["recycles"]["held"] == held_before + 2  # ...so each worker was retired,
    assert second["pid"] != first["pid"]  # and the next call got a fresh one
    assert after_kb - before_kb < MARGIN_KB, (before_kb, after_kb)


KEEPER = """
import os

KEPT = []

def handle(request):
    KEPT.append(b"k" * (request.body.get("keep_mb", 0) << 20))
    return {"pid": os.getpid(), "calls": len(KEPT)}
"""


def test_a_tenants_workers_together_hold_at_most_its_share(bundles_root, bundle_dir):
    from apps_runtime.sandbox import Sandbox

    bundle = write_bundle(bundle_dir, {HANDLER: KEEPER})
    # Each worker holds ~14 MiB after a call, plus what it keeps: one keeping 14 MiB fits the 40 MiB share
    # alone, two do not.
    box = Sandbox(bundle_root=str(bundles_root), warm_tenant_memory_mb=40)

    def call(tenant: str, app: str, keep_mb: int = 0) -> dict:
        request = {"body": {"keep_mb": keep_mb}}
        invocation = Invocation(bundle, HANDLER, request, SandboxLimits(), tenant, f"{tenant}:{app}")
        return box.run(invocation, refuse_data_calls).body

    try:
        first = call("t1", "a", keep_mb=14)
        second = call("t1", "b", keep_mb=14)  # takes t1 over its share: this worker goes
        other = call("t2", "a", keep_mb=14)  # another tenant's share is its own
        assert box.pool_stats()["recycles"]["tenant_memory"] == 1
        assert 2 * 14 <= box.pool_stats()["held_mb"] <= 2 * 40  # t1's first worker and t2's
        assert call("t1", "a") == {"pid": first["pid"], "calls": 2}  # the first worker stayed
        assert call("t1", "b")["pid"] != second["pid"]
        assert call("t2", "a") == {"pid": other["pid"], "calls": 2}
    finally:
        box.close()


SWAPPER = """
import os

def handle(request):
    held = os.memfd_create("swapped")
    os.pwrite(held, b"w" * (16 << 20), 0)
    os.dup2(held, 0)  # where /dev/null was: the worker's fd count does not change
    os.close(held)
    return os.getpid()
"""


def test_an_in_memory_file_swapped_for_a_runtime_fd_still_retires_the_worker(sandbox_at, bundle_dir):
    box = sandbox_at(3)  # the tier without the seccomp filter, where memfd_create works
    bundle = write_bundle(bundle_dir, {HANDLER: SWAPPER})
    invocation = Invocation(bundle, HANDLER, {}, SandboxLimits(), "swapper", f"swapper:{bundle}:1")
    held_before = box.pool_stats()["recycles"]["held"]

    first = box.run(invocation, refuse_data_calls).body

    assert box.pool_stats()["recycles"]["held"] == held_before + 1
    assert box.run(invocation, refuse_data_calls).body != first
