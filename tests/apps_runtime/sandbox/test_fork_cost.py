"""What the zygote prepares once so that each child copies fewer of its pages, and that it changes nothing a
handler can see: its own log streams, threads that still work, nothing left over from an earlier call.
"""

import json
import os

import pytest

from apps_runtime.sandbox.runtime import hardening

from .conftest import TIERS

ZYGOTE_MODULES = """
import sys

def handle(request):
    return sorted(name for name in ("threading", "json") if name in sys.modules)
"""

THREADS = """
import threading

def handle(request):
    box = []
    worker = threading.Thread(target=box.append, args=(request.body,))
    worker.start()
    worker.join()
    return box
"""

LOG_STREAMS = """
import sys

def handle(request):
    sys.stdout.write(request.body)  # no newline: stays in the stream's buffer until the call's end
    return [sys.stdout.seekable(), sys.stderr.seekable(), sys.stdout is sys.__stdout__]
"""


@pytest.mark.parametrize("tier", TIERS)
def test_the_zygote_preloads_json_but_not_threading(run_at, tier):
    # threading's at-fork handler would run (and copy ~110 pages) in every child.
    assert run_at(tier, ZYGOTE_MODULES).body == ["json"]


@pytest.mark.parametrize("tier", (1, 2))  # tier 3 allows no thread at all
def test_a_handler_still_imports_threading_and_starts_a_thread(run_at, tier):
    assert run_at(tier, THREADS, {"body": "hello"}).body == ["hello"]


@pytest.mark.parametrize("tier", TIERS)
def test_log_streams_made_in_the_zygote_are_each_calls_own(run_at, tier):
    first = run_at(tier, LOG_STREAMS, {"body": "first call"})
    second = run_at(tier, LOG_STREAMS, {"body": "second call"})
    # Pipes: not seekable, as when each child built its own streams.
    assert first.body == second.body == [False, False, True]
    assert first.logs == "first call"
    assert second.logs == "second call"


def _fds_left_open(lowest: int, keep_offsets: list[int]) -> tuple[list[int], list[int]]:
    """In a forked child: open ten fds, then close_fds_above the ``lowest``-th of them keeping those at
    ``keep_offsets``. Returns the ten fds and those of them still open.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(10)]
            hardening.close_fds_above(fds[lowest], [fds[i] for i in keep_offsets] + [write_end])
            os.write(write_end, json.dumps([fds, [fd for fd in fds if _is_open(fd)]]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    fds, left = json.loads(os.read(read_end, 65536))
    os.close(read_end)
    os.waitpid(pid, 0)
    return fds, left


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@pytest.mark.parametrize("keep_offsets", [[], [2, 3, 4], [2, 5, 9], [3, 4, 9]])
def test_close_fds_above_closes_all_but_the_kept_fds(keep_offsets):
    fds, left = _fds_left_open(2, keep_offsets)
    # The two below the lowest stay; above it, only the kept ones (consecutive ones included).
    assert left == fds[:2] + [fds[i] for i in keep_offsets]
