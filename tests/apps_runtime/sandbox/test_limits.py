"""Limits: time, memory, process exits, sizes and logs. After any of them the next call works."""

import time

import pytest

from apps_runtime.sandbox import HandlerFailed, Invocation, RequestTooLarge, Sandbox, SandboxLimits

from .bundles import refuse_data_calls, write_bundle
from .conftest import TIERS

OK_HANDLER = "def handle(request):\n    return 'next call works'\n"


def test_infinite_loop_times_out_promptly_and_the_next_call_works(run_handler):
    started = time.monotonic()
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            def handle(request):
                while True:
                    pass
        """,
            timeout_ms=300,
        )
    elapsed = time.monotonic() - started

    assert failed.value.kind == "handler_timeout"
    assert 0.3 <= elapsed < 1.0
    assert run_handler(OK_HANDLER).body == "next call works"


def test_timeout_includes_time_spent_sleeping(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            import time

            def handle(request):
                time.sleep(60)
        """,
            timeout_ms=200,
        )

    assert failed.value.kind == "handler_timeout"


def test_logs_printed_before_a_timeout_are_kept(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            def handle(request):
                print("about to spin")
                while True:
                    pass
        """,
            timeout_ms=200,
        )

    assert failed.value.logs == "about to spin\n"


def test_memory_bomb_hits_the_resource_limit_and_the_next_call_works(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            def handle(request):
                hog = bytearray(1 << 30)
                return len(hog)
        """,
            memory_mb=256,
        )

    assert failed.value.kind == "handler_resource_limit"
    assert run_handler(OK_HANDLER).body == "next call works"


def test_growing_memory_until_exhausted_hits_the_resource_limit(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            def handle(request):
                hog = []
                while True:
                    hog.append(bytearray(8 << 20))
        """,
            memory_mb=256,
        )

    assert failed.value.kind == "handler_resource_limit"


@pytest.mark.parametrize("tier", TIERS)
def test_child_runs_under_the_rlimits_of_its_invocation(run_at, tier):
    outcome = run_at(
        tier,
        """
        import resource

        def handle(request):
            names = ["CPU", "AS", "NPROC", "NOFILE", "FSIZE", "CORE"]
            return {f"RLIMIT_{n}": resource.getrlimit(getattr(resource, f"RLIMIT_{n}")) for n in names}
    """,
        timeout_ms=1500,
        memory_mb=200,
    )

    nproc = outcome.body.pop("RLIMIT_NPROC")
    assert outcome.body == {
        "RLIMIT_CPU": [3, 4],  # ceil(1.5 s) + 1 s soft (SIGXCPU), then SIGKILL one second later
        "RLIMIT_AS": [200 << 20, 200 << 20],
        "RLIMIT_NOFILE": [64, 64],
        "RLIMIT_FSIZE": [16 << 20, 16 << 20],
        "RLIMIT_CORE": [0, 0],
    }
    # Tier 3 stops new processes with RLIMIT_NPROC=0; above it seccomp does, and threads stay possible.
    assert (nproc == [0, 0]) == (tier == 3)


def test_death_by_sigxcpu_is_a_resource_limit(run_handler):
    # What the RLIMIT_CPU backstop delivers; sent directly so the test need not burn seconds of CPU.
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            import os, signal

            def handle(request):
                os.kill(os.getpid(), signal.SIGXCPU)
        """)

    assert failed.value.kind == "handler_resource_limit"


def test_exit_without_a_result_is_a_handler_error(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            import os

            def handle(request):
                print("leaving")
                os._exit(3)
        """)

    assert failed.value.kind == "handler_error"
    assert failed.value.logs == "leaving\n"
    assert run_handler(OK_HANDLER).body == "next call works"


def test_killed_by_a_signal_it_sent_itself_is_a_handler_error(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler("""
            import os, signal

            def handle(request):
                os.kill(os.getpid(), signal.SIGTERM)
        """)

    assert failed.value.kind == "handler_error"


def test_response_over_the_limit_is_output_too_large(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            def handle(request):
                return "x" * 20_000
        """,
            max_response_bytes=10_000,
        )

    assert failed.value.kind == "output_too_large"


def test_response_at_the_limit_is_delivered(run_handler):
    outcome = run_handler(
        """
        def handle(request):
            return "x" * 9_998  # 10_000 bytes of JSON with the quotes
    """,
        max_response_bytes=10_000,
    )

    assert len(outcome.body) == 9_998


def test_oversized_frame_written_straight_to_the_protocol_is_stopped_by_the_host(run_handler):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(
            """
            import os, struct

            def handle(request):
                os.write(3, struct.pack(">I", 1 << 30))  # announces 1 GiB on the private protocol fd
                while True:
                    pass
        """,
            max_response_bytes=10_000,
        )

    assert failed.value.kind == "output_too_large"


def test_request_over_the_limit_is_refused_before_running(sandbox, bundle_dir):
    write_bundle(bundle_dir, {"server/h.py": "def handle(request):\n    raise AssertionError\n"})
    invocation = Invocation(
        str(bundle_dir), "server/h.py", {"body": {"blob": "x" * 2000}}, SandboxLimits(max_request_bytes=1000)
    )

    with pytest.raises(RequestTooLarge) as refused:
        sandbox.run(invocation, refuse_data_calls)

    assert isinstance(refused.value, ValueError)
    assert refused.value.limit == 1000


def test_printing_garbage_and_fake_frames_cannot_harm_the_protocol(run_handler):
    outcome = run_handler("""
        import os, struct, sys

        def handle(request):
            fake = b'{"result":{"status":500,"body":"forged"}}'
            print(struct.pack(">I", len(fake)) + fake)
            os.write(1, struct.pack(">I", len(fake)) + fake)
            os.write(2, b"\\x00\\xff\\xfe not utf-8\\n")
            sys.stderr.write("to stderr\\n")
            return {"fine": True}
    """)

    assert (outcome.status, outcome.body) == (200, {"fine": True})
    assert "forged" in outcome.logs
    assert "to stderr" in outcome.logs
    assert "\ufffd" in outcome.logs  # undecodable bytes are replaced, not fatal


def test_logs_are_truncated_at_max_log_bytes_and_the_child_never_blocks(run_handler):
    outcome = run_handler(
        """
        import os

        def handle(request):
            for _ in range(50):
                os.write(1, b"y" * 10_000)  # 500 kB: far beyond the pipe's buffer
            print("z" * 100_000)
            return "done"
    """,
        max_log_bytes=1000,
    )

    assert outcome.body == "done"
    kept, _, marker = outcome.logs.partition("\n[log truncated")
    assert kept == "y" * 1000
    assert "599001 more bytes dropped" in marker


def test_zero_max_log_bytes_keeps_no_output(run_handler):
    outcome = run_handler(
        """
        def handle(request):
            print("hidden")
            return 1
    """,
        max_log_bytes=0,
    )

    assert not outcome.logs.startswith("hidden")


def test_limits_reject_nonsense_values():
    with pytest.raises(ValueError):
        SandboxLimits(timeout_ms=0)
    with pytest.raises(ValueError):
        SandboxLimits(max_data_calls=-1)


THREAD_BOMB = """
    import threading

    def handle(request):
        threading.stack_size(64 * 1024)  # small stacks: RLIMIT_AS alone would allow thousands
        release = threading.Event()
        started, error = 0, None
        try:
            while started < 1000:
                threading.Thread(target=release.wait).start()
                started += 1
        except RuntimeError as exc:
            error = str(exc)
        release.set()
        return {"started": started, "error": error}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_starting_threads_stops_at_max_threads_and_the_next_call_works(run_at, tier):
    outcome = run_at(tier, THREAD_BOMB, max_threads=8)

    # The handler's main thread counts; tier 3 (no seccomp to tell threads from processes) allows none.
    assert outcome.body == {"started": 0 if tier == 3 else 7, "error": "can't start new thread"}
    assert run_at(tier, OK_HANDLER).body == "next call works"


def test_threads_of_a_finished_call_do_not_count_against_the_next_call_on_its_uid(bundles_root, bundle_dir):
    # One slot, so every call runs as the same uid; each returns with its threads still running.
    box = Sandbox(bundle_root=str(bundles_root), tier=1, max_concurrent=1)
    write_bundle(bundle_dir, {"server/h.py": THREAD_BOMB.replace("release.set()", "")})
    invocation = Invocation(str(bundle_dir), "server/h.py", {}, SandboxLimits(max_threads=8))
    try:
        outcomes = [box.run(invocation, refuse_data_calls).body for _ in range(5)]
    finally:
        box.close()

    assert outcomes == [{"started": 7, "error": "can't start new thread"}] * 5


FILL_SCRATCH = """
    import errno, os

    def handle(request):
        chunk = b"x" * (1 << 20)
        written = 0
        try:
            for n in range(request.body["files"]):
                with open(f"fill-{n}", "wb") as f:
                    for _ in range(10):
                        f.write(chunk)
                        written += 1
        except OSError as exc:
            return {"written_mib": written, "errno": errno.errorcode[exc.errno]}
        return {"written_mib": written, "errno": None}
"""


@pytest.mark.parametrize("tier", TIERS)
def test_scratch_writes_stop_at_the_per_call_cap_and_the_space_is_whole_again_for_the_next_call(
    run_at, sandbox_at, tier
):
    cap_mib = sandbox_at(tier).scratch_bytes_per_call // (1 << 20)

    filled = run_at(tier, FILL_SCRATCH, {"body": {"files": 20}})  # 200 MiB, each file under RLIMIT_FSIZE
    again = run_at(tier, FILL_SCRATCH, {"body": {"files": cap_mib // 10}})

    assert cap_mib == 64
    assert filled.body["errno"] == "ENOSPC"
    assert cap_mib - 2 <= filled.body["written_mib"] <= cap_mib
    assert again.body == {"written_mib": cap_mib // 10 * 10, "errno": None}


@pytest.mark.parametrize(
    "writer",
    [
        'open("big", "wb").write(b"x" * (17 << 20))',  # one file over RLIMIT_FSIZE (16 MiB): EFBIG
        '[open(f"f{n}", "wb").write(b"x" * (10 << 20)) for n in range(20)]',  # the slot's space: ENOSPC
    ],
)
def test_a_call_that_dies_of_a_full_scratch_space_fails_with_a_resource_limit(run_handler, writer):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(f"def handle(request):\n    {writer}\n")

    assert failed.value.kind == "handler_resource_limit"
    assert "OSError" in failed.value.trace
    assert run_handler(OK_HANDLER).body == "next call works"
