"""The tool option ``rateLimit``: what deploys, and what each bad value is told."""

import pytest

from apps_runtime.manifest import validate_manifest
from tenants.rate_limit_rule import CALLS_MAX
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of

LIMIT = "/mcp/tools/0/rateLimit"


@pytest.mark.parametrize(
    "limit",
    [
        {"calls": 1, "per": "second"},
        {"calls": 60, "per": "minute", "scope": "user"},
        {"calls": CALLS_MAX, "per": "hour", "scope": "tenant"},
    ],
)
def test_a_valid_rate_limit_deploys_without_warnings(limit):
    assert validate_manifest(edited([(LIMIT, limit)]), FILES) == []


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("60/minute", [(LIMIT, 'must be an object like {"calls": 60, "per": "minute", "scope": "user"}')]),
        ({"per": "minute"}, [(f"{LIMIT}/calls", "missing required key 'calls'")]),
        ({"calls": 5}, [(f"{LIMIT}/per", "missing required key 'per'")]),
        ({"calls": 0, "per": "minute"}, [(f"{LIMIT}/calls", f"from 1 to {CALLS_MAX}, not 0")]),
        ({"calls": CALLS_MAX + 1, "per": "minute"}, [(f"{LIMIT}/calls", f"not {CALLS_MAX + 1}")]),
        ({"calls": 2.5, "per": "minute"}, [(f"{LIMIT}/calls", "must be a whole number")]),
        ({"calls": True, "per": "minute"}, [(f"{LIMIT}/calls", "not True")]),
        (
            {"calls": 5, "per": "day"},
            [(f"{LIMIT}/per", 'per must be "second", "minute" or "hour", not \'day\'')],
        ),
        ({"calls": 5, "per": ["minute"]}, [(f"{LIMIT}/per", "not ['minute']")]),
        ({"calls": 5, "per": "minute", "scope": "app"}, [(f"{LIMIT}/scope", 'must be "user"')]),
        ({"calls": 5, "per": "minute", "burst": 2}, [(f"{LIMIT}/burst", "unknown key 'burst'")]),
    ],
    ids=[
        "string",
        "no calls",
        "no per",
        "zero",
        "too many",
        "fraction",
        "boolean",
        "day",
        "list",
        "scope",
        "key",
    ],
)
def test_each_bad_rate_limit_is_told_what_to_change_at_its_pointer(limit, expected):
    problems = problems_of(edited([(LIMIT, limit)]))

    assert [problem.pointer for problem in problems] == [ptr for ptr, _ in expected]
    for problem, (_, text) in zip(problems, expected, strict=True):
        assert text in problem.message


def test_every_problem_of_one_rate_limit_is_reported_at_once():
    problems = problems_of(edited([(LIMIT, {"calls": -1, "per": "week", "scope": "everyone"})]))

    assert [problem.pointer for problem in problems] == [f"{LIMIT}/calls", f"{LIMIT}/per", f"{LIMIT}/scope"]
