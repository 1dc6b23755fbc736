"""What the host accepts from a child: frames nested within bounds, statuses with a body, kinds a child may
report. A handler can write any bytes to the protocol socket (fd 3), so each case forges its frame there.
"""

import json

import pytest

from apps_runtime.sandbox import HandlerFailed
from apps_runtime.sandbox.runtime.protocol import MAX_VALUE_DEPTH

# Write one raw frame to the protocol socket, then wait for the host to end the call.
FORGE = """
import os, struct

def send(payload):
    os.write(3, struct.pack(">I", len(payload)) + payload)

def handle(request):
    send({payload!r})
    os.read(3, 1)  # the host stops listening after this frame; it kills us or closes the socket
    return {{"forged": False}}
"""


def forge(payload: bytes) -> str:
    return FORGE.format(payload=payload)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_frame_nested_too_deep_is_a_handler_error_not_a_host_crash(run_handler):
    deep = b"[" * 100_000 + b"]" * 100_000

    with pytest.raises(HandlerFailed) as failed:
        run_handler(forge(b'{"result":{"status":200,"body":' + deep + b"}}"))

    assert failed.value.kind == "handler_error" and failed.value.error_id.startswith("err_")
    assert "64 levels" in failed.value.trace


def test_a_data_call_nested_too_deep_is_a_handler_error_and_never_reaches_the_broker(run_handler):
    frame = b'{"op":"create","args":{"data":' + nested(5_000).encode() + b"}}"
    calls = []

    with pytest.raises(HandlerFailed) as failed:
        run_handler(forge(frame), broker=lambda *a: calls.append(a))

    assert failed.value.kind == "handler_error" and calls == []


@pytest.mark.parametrize("extra", [0, 1])
def test_handler_values_nest_up_to_the_limit_and_no_further(run_handler, extra):
    depth = MAX_VALUE_DEPTH + extra
    source = f"def handle(request):\n    return {nested(depth)}\n"

    if extra:
        with pytest.raises(HandlerFailed) as failed:
            run_handler(source)
        assert failed.value.kind == "handler_error"
    else:
        assert run_handler(source).body == eval(nested(depth))  # noqa: S307 - a literal of brackets


def test_nested_strings_with_brackets_do_not_count_as_nesting(run_handler):
    text = "[[[{{{" * 1000 + '\\"]' * 10

    assert run_handler(f"def handle(request):\n    return {{'text': {text!r}}}\n").body == {"text": text}


@pytest.mark.parametrize("status", [100, 101, 199, 204, 205, 304])
def test_statuses_that_cannot_carry_a_json_body_are_handler_errors(run_handler, status):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(f"def handle(request):\n    return {{'body': 'here'}}, {status}\n")

    assert failed.value.kind == "handler_error"


@pytest.mark.parametrize("status", [100, 204, 304])
def test_forged_result_frames_with_bodiless_statuses_are_refused_by_the_host(run_handler, status):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(forge(b'{"result":{"status":%d,"body":null}}' % status))

    assert failed.value.kind == "handler_error"
    assert str(status) in failed.value.trace


@pytest.mark.parametrize("status", [200, 201, 203, 206, 302, 404, 599])
def test_statuses_with_a_body_pass(run_handler, status):
    assert run_handler(f"def handle(request):\n    return {{'ok': 1}}, {status}\n").status == status


@pytest.mark.parametrize("kind", ["sandbox_unavailable", "handler_timeout", "other", 7, ["handler_error"]])
def test_a_child_cannot_claim_a_failure_only_the_host_decides(run_handler, kind):
    frame = {"failure": {"kind": kind, "trace": "", "detail": "forged"}}

    with pytest.raises(HandlerFailed) as failed:
        run_handler(forge(json.dumps(frame).encode()))

    assert failed.value.kind == "handler_error"
    assert failed.value.http_status == 500


@pytest.mark.parametrize("kind", ["handler_error", "handler_resource_limit", "output_too_large"])
def test_a_child_may_report_its_own_failures(run_handler, kind):
    with pytest.raises(HandlerFailed) as failed:
        run_handler(forge(b'{"failure":{"kind":"%s","trace":"","detail":""}}' % kind.encode()))

    assert failed.value.kind == kind


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_the_host_refuses_deep_frames_and_claimed_platform_faults_at_every_tier(run_at, tier):
    deep = b'{"result":{"status":200,"body":' + nested(100_000).encode() + b"}}"
    claim = b'{"failure":{"kind":"sandbox_unavailable","trace":"","detail":""}}'

    for frame in (deep, claim):
        with pytest.raises(HandlerFailed) as failed:
            run_at(tier, forge(frame))
        assert failed.value.kind == "handler_error"
