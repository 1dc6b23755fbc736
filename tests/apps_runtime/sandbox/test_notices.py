"""Notices: ``request.progress`` and ``request.log`` reach the broker without a reply, bounded."""

import pytest

from apps_runtime.call_events import notice_ops
from apps_runtime.sandbox import BrokerError
from apps_runtime.sandbox.runtime import protocol


class Events:
    def __init__(self):
        self.seen: list[tuple] = []

    def progress(self, done, total, message):
        self.seen.append(("progress", done, total, message))

    def log(self, level, message):
        self.seen.append(("log", level, message))


def broker_for(events: Events, data_calls: list | None = None):
    ops = notice_ops(events)

    def broker(op: str, args: dict):
        if op in ops:
            return ops[op](args)
        data_calls.append(op)
        return {"id": "1"}

    return broker


def test_progress_and_log_lines_reach_the_events_in_order_without_costing_data_calls(run_handler):
    events, data_calls = Events(), []

    outcome = run_handler(
        """
        import time

        def handle(request):
            request.log("info", "starting")
            for done in range(1, 4):
                request.progress(done, 3, f"step {done}")
                time.sleep(0.15)  # past the SDK's interval: each one is sent
            request.records.get("cases", "1")  # a reply still reaches its data call
            request.log("warning", "done")
            return {"ok": True}
        """,
        broker=broker_for(events, data_calls),
    )

    assert outcome.body == {"ok": True}
    assert events.seen == [
        ("log", "info", "starting"),
        ("progress", 1, 3, "step 1"),
        ("progress", 2, 3, "step 2"),
        ("progress", 3, 3, "step 3"),
        ("log", "warning", "done"),
    ]
    assert data_calls == ["records.get"]
    assert "[info] starting" in outcome.logs and "[warning] done" in outcome.logs  # the run's log keeps them


def test_a_tight_progress_loop_is_coalesced_and_its_last_value_still_arrives(run_handler):
    events = Events()

    run_handler(
        """
        def handle(request):
            for done in range(1, 100001):
                request.progress(done, 100000)
            return {}
        """,
        broker=broker_for(events),
    )

    progress = [entry for entry in events.seen if entry[0] == "progress"]
    assert progress[0] == ("progress", 1, 100000, None) and progress[-1] == ("progress", 100000, 100000, None)
    assert len(progress) < 100  # one per 100 ms at most, plus the last
    assert [p[1] for p in progress] == sorted({p[1] for p in progress})


def test_a_handler_that_floods_raw_notice_frames_is_bounded(run_handler):
    events = Events()

    outcome = run_handler(
        """
        import os, struct

        def handle(request):
            lines = b'{"op":"call.log","args":{"level":"info","message":"%s"}}' % (b"x" * 5000)
            bad = b'{"op":"call.progress","args":{"done":NaN}}'
            back = b'{"op":"call.progress","args":{"done":-1}}'
            for payload in [bad, back] + [lines] * 300:
                os.write(3, struct.pack(">I", len(payload)) + payload)
            request.progress(5)
            return {"ok": True}
        """,
        broker=broker_for(events),
    )

    assert outcome.body == {"ok": True}
    logs = [entry for entry in events.seen if entry[0] == "log"]
    assert len(logs) == protocol.MAX_LOG_NOTICES
    assert all(len(message) == protocol.MAX_NOTICE_CHARS for _, _, message in logs)
    assert [entry for entry in events.seen if entry[0] == "progress"] == [
        ("progress", -1, None, None),
        ("progress", 5, None, None),
    ]


def test_the_sdk_refuses_values_that_are_not_progress(run_handler):
    outcome = run_handler(
        """
        def handle(request):
            problems = []
            for args in ((float("nan"),), (True,), ("3",), (1, float("inf")), (1, None, 5)):
                try:
                    request.progress(*args)
                except (TypeError, ValueError) as err:
                    problems.append(str(err))
            try:
                request.log("loud", "x")
            except ValueError as err:
                problems.append(str(err))
            return {"problems": problems}
        """,
        broker=broker_for(Events()),
    )

    assert len(outcome.body["problems"]) == 6


def test_the_host_checks_every_notice_itself():
    events = Events()
    ops = notice_ops(events)

    for args in ({"done": "1"}, {"done": True}, {"done": 1, "total": "x"}, {"done": 1, "message": 3}):
        try:
            ops[protocol.PROGRESS](args)
        except BrokerError:
            continue
        raise AssertionError(f"accepted {args}")
    for args in ({"level": "loud", "message": "x"}, {"level": "info", "message": None}):
        try:
            ops[protocol.LOG](args)
        except BrokerError:
            continue
        raise AssertionError(f"accepted {args}")
    ops[protocol.PROGRESS]({"done": 2})
    ops[protocol.PROGRESS]({"done": 2})  # not forward: dropped

    assert events.seen == [("progress", 2, None, None)]


def test_without_events_notices_are_checked_and_dropped():
    ops = notice_ops(None)

    # Checked: the same bad notices the host refuses with events are refused without them.
    for op, bad in ((protocol.PROGRESS, {"done": "1"}), (protocol.LOG, {"level": "loud", "message": "x"})):
        with pytest.raises(BrokerError):
            ops[op](bad)
    # Dropped: a valid notice gets no reply (nothing goes back to the child) and nothing fails.
    assert ops[protocol.PROGRESS]({"done": 1}) is None
    assert ops[protocol.LOG]({"level": "info", "message": "x"}) is None


def test_a_handler_run_without_events_keeps_its_log_and_drops_the_notices(run_handler):
    data_calls: list = []

    outcome = run_handler(
        """
        def handle(request):
            request.progress(1, 2, "half")
            request.log("info", "noted")
            return {"ok": True}
        """,
        broker=broker_for(None, data_calls),
    )

    assert outcome.body == {"ok": True}
    assert data_calls == []  # no notice became a data call
    assert "[info] noted" in outcome.logs
