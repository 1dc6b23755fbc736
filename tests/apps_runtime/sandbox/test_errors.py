"""Error ids and the exceptions the sandbox raises."""

import pickle
import re
import time

import pytest

from apps_runtime.sandbox import HandlerFailed
from core.error_ids import new_error_id

ULID = re.compile(r"^err_[0-9A-HJKMNP-TV-Z]{26}$")


def test_error_id_is_err_and_a_crockford_ulid():
    assert ULID.match(new_error_id())


def test_error_ids_are_unique_and_sort_by_time():
    first = new_error_id()
    started_ms = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 == started_ms:  # ids sort by millisecond: let one pass
        pass
    second = new_error_id()

    assert first < second
    assert len({new_error_id() for _ in range(1000)}) == 1000


def test_error_id_encodes_the_current_millisecond():
    before = time.time_ns() // 1_000_000
    error_id = new_error_id()
    after = time.time_ns() // 1_000_000
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    value = 0
    for char in error_id[4:]:
        value = value * 32 + alphabet.index(char)

    assert before <= value >> 80 <= after


def test_handler_failed_message_is_generic_and_carries_the_id():
    exc = HandlerFailed("handler_timeout", trace="Traceback ...", logs="printed")

    assert str(exc) == f"The handler timed out (error id {exc.error_id})"
    assert exc.http_status == 504
    assert ULID.match(exc.error_id)


def test_handler_failed_survives_pickling():
    exc = HandlerFailed("output_too_large", trace="t", logs="l")

    copy = pickle.loads(pickle.dumps(exc))

    assert (copy.kind, copy.error_id, copy.trace, copy.logs) == (exc.kind, exc.error_id, "t", "l")


def test_handler_failed_rejects_unknown_kinds():
    with pytest.raises(ValueError):
        HandlerFailed("oops")
