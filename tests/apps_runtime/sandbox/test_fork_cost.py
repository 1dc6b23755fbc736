"""What the zygote prepares once so that each child copies fewer of its pages, and that it changes nothing a
handler can see: its own log streams, threads that still work, nothing left over from an earlier call.
"""

import pytest

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
