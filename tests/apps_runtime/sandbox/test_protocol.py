"""The sandbox protocol shared by the host, the zygote and the child: framing, typed messages, and what the
host refuses from a child (which tenant code may have forged).
"""

import ast
import json
import os
import sys

import pytest

from apps_runtime.sandbox.runtime import protocol


def test_decoder_reassembles_frames_split_at_any_byte():
    stream = b"".join(protocol.pack(protocol.dumps(value)) for value in ({"a": 1}, [2], "trois"))
    decoder = protocol.FrameDecoder(limit=100)

    payloads = []
    for i in range(len(stream)):
        payloads += decoder.feed(stream[i : i + 1])

    assert payloads == [b'{"a":1}', b"[2]", b'"trois"']
    assert not decoder.pending


def test_decoder_refuses_a_frame_larger_than_its_limit_from_the_header_alone():
    decoder = protocol.FrameDecoder(limit=10)

    with pytest.raises(protocol.FrameTooLarge):
        decoder.feed(protocol.HEADER.pack(11))


def test_blocking_read_and_write_round_trip_over_a_pipe():
    r, w = os.pipe()
    try:
        protocol.write_frame(w, protocol.dumps({"x": "\u00e9\ud800"}))
        os.close(w)
        assert protocol.read_frame(r) == b'{"x":"\\u00e9\\ud800"}'
        assert protocol.read_frame(r) is None
    finally:
        os.close(r)


def test_dumps_rejects_values_that_are_not_json():
    for value in ({1, 2}, float("nan"), object()):
        with pytest.raises((TypeError, ValueError)):
            protocol.dumps(value)


def test_the_protocol_module_imports_only_the_standard_library():
    # The zygote and the child import it under python -I -S: nothing else is there.
    tree = ast.parse(open(protocol.__file__).read())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    assert imported and imported <= sys.stdlib_module_names


@pytest.mark.parametrize(
    "message",
    [
        protocol.Spawn(7, [1879048200, 1879048200], True),
        protocol.Spawn(8, None, False),
        protocol.Arm(7, 1234.5),
        protocol.Kill(7),
    ],
)
def test_control_messages_round_trip(message):
    assert protocol.decode_control(message.encode()) == message


def test_an_unknown_control_command_is_ignored():
    assert protocol.decode_control(b'{"cmd": "reboot", "id": 1}') is None


@pytest.mark.parametrize(
    "report", [protocol.Forked(), protocol.ForkFailed("EAGAIN"), protocol.Exited(-9, timed_out=True)]
)
def test_zygote_reports_round_trip(report):
    assert protocol.decode_report(report.encode()) == report


def test_ready_round_trips_and_refuses_what_is_not_a_ready_message():
    ready = protocol.Ready(True, 12, "namespaces", "a70d0d0a", {"ok": True, "problems": []})

    assert protocol.Ready.decode(ready.encode()) == ready
    with pytest.raises(ValueError):
        protocol.Ready.decode(b'{"pid": 12}')


def test_launch_and_call_configs_round_trip():
    launch = protocol.LaunchConfig(2, [5, 5], fd_paths=True, ipc_namespace=False)
    call = protocol.CallConfig("/b/app/1", "server/x.py", "/s/call-1", {"timeout_ms": 10}, code=True)

    assert protocol.LaunchConfig.decode(json.loads(launch.encode())) == launch
    assert protocol.CallConfig.decode(call.encode()) == call


def test_replies_round_trip():
    for reply in (protocol.Reply(ok={"items": []}), protocol.Reply(error=("not_found", "no such record"))):
        assert protocol.Reply.decode(reply.encode()) == reply


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (
            protocol.DataCall("records.get", {"id": "1"}).encode(),
            protocol.DataCall("records.get", {"id": "1"}),
        ),
        (protocol.encode_result(201, b'{"a":1}'), protocol.Result(201, {"a": 1}, 0)),
        (
            protocol.Failure("handler_error", "Traceback", "x").encode(),
            protocol.Failure("handler_error", "Traceback", "x"),
        ),
    ],
)
def test_child_frames_decode_to_their_messages(frame, expected):
    assert protocol.decode_child_frame(frame) == expected


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"not json", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"op": 1, "args": {}}', "malformed data call"),
        (b'{"op": "records.get", "args": []}', "malformed data call"),
        (b'{"result": "ok"}', "malformed final frame"),
        (b'{"failure": null}', "malformed final frame"),
        (b'{"hello": 1}', "unknown frame keys"),
        (b'{"result": {"body": ' + b"[" * 70 + b"]" * 70 + b"}}", "nested deeper"),
    ],
)
def test_forged_child_frames_are_rejected_with_a_reason(frame, reason):
    with pytest.raises(protocol.FrameRejected) as rejected:
        protocol.decode_child_frame(frame)

    assert reason in rejected.value.reason


def test_a_failure_frame_is_bounded_and_typed_whatever_the_child_sends():
    frame = protocol.dumps({"failure": {"kind": 42, "trace": "t" * 10**6, "detail": ["not text"]}})

    failure = protocol.decode_child_frame(frame)

    assert failure.kind == "42" and failure.detail == ""
    assert len(failure.trace) == protocol.MAX_TRACE_CHARS


def test_every_failure_kind_a_child_may_claim_is_in_the_failure_table():
    assert protocol.CHILD_FAILURE_KINDS < set(protocol.HANDLER_FAILURES)
    assert protocol.READ_OPS < protocol.OPS


def test_the_progress_pacer_lets_a_burst_through_then_its_rate():
    now = [0.0]
    pacer = protocol.Pacer(burst=3, per_second=10, clock=lambda: now[0])

    assert [pacer.take() for _ in range(4)] == [True, True, True, False]
    assert pacer.wait() == pytest.approx(0.1)
    now[0] += 0.1
    assert pacer.take() is True and pacer.take() is False
    now[0] += 60  # a long pause refills the burst, never more
    assert sum(pacer.take() for _ in range(10)) == 3
