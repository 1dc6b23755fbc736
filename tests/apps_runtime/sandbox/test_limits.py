"""Limits: time, memory, process exits, sizes and logs. After any of them the next call works."""

import time

import pytest

from apps_runtime.sandbox import HandlerFailed, Invocation, RequestTooLarge, SandboxLimits

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
