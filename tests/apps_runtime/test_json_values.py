"""The one rule for JSON values the platform can hold: valid Unicode text, bounded nesting."""

import pytest

from apps_runtime.json_values import value_problem


def _nested(depth: int) -> object:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": "\ud800"}, "/a: is not valid Unicode text (it holds a lone surrogate)"),
        (
            {"a/b": ["x", {"\udfff": 1}]},
            "/a~1b/1: a key is not valid Unicode text (it holds a lone surrogate)",
        ),
        ({"deep": _nested(64)}, "/deep" + "/0" * 63 + ": nests deeper than 64 levels"),
    ],
)
def test_values_no_consumer_can_take_are_refused_at_their_pointer(value, problem):
    assert value_problem(value) == problem


def test_nesting_far_past_the_recursion_limit_is_measured_without_recursing():
    assert value_problem(_nested(200_000)).endswith("nests deeper than 64 levels")


@pytest.mark.parametrize("value", [{}, {"a": [1, 2.5, None, True, "é 😀"]}, _nested(64), "plain"])
def test_ordinary_values_pass(value):
    assert value_problem(value) is None
