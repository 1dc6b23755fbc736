"""The tool option maxOutputTokens: its range and type, with messages that say what to change."""

import pytest

from apps_runtime.manifest import validate_manifest
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of

BUDGET = "/mcp/tools/0/maxOutputTokens"


@pytest.mark.parametrize("tokens", [100, 20_000, 1_000_000])
def test_a_budget_in_range_deploys(tokens):
    assert validate_manifest(edited([(BUDGET, tokens)]), FILES) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (99, "99 is out of range: use a value from 100 to 1000000"),
        (1_000_001, "1000001 is out of range: use a value from 100 to 1000000"),
        ("5000", "must be an integer, not a string"),
        (5000.5, "must be an integer, not a number"),
        (True, "must be an integer, not a boolean"),
    ],
)
def test_a_bad_budget_is_refused_with_what_to_change(value, message):
    assert [(p.pointer, p.message) for p in problems_of(edited([(BUDGET, value)]))] == [(BUDGET, message)]


CLOSED_LIST = {
    "type": "object",
    "properties": {"items": {"type": "array"}, "next_cursor": {"type": "string"}},
    "additionalProperties": False,
}


def test_a_closed_output_schema_with_one_list_and_no_truncated_key_is_warned():
    warnings = validate_manifest(edited([("/mcp/tools/0/outputSchema", CLOSED_LIST)]), FILES)
    assert [(w.pointer, w.message.split(":")[0]) for w in warnings] == [
        ("/mcp/tools/0/outputSchema", 'declare a "truncated" property ({"type"')
    ]


@pytest.mark.parametrize(
    "schema",
    [
        {**CLOSED_LIST, "properties": {**CLOSED_LIST["properties"], "truncated": {"type": "object"}}},
        {**CLOSED_LIST, "additionalProperties": True},
        {**CLOSED_LIST, "properties": {"count": {"type": "integer"}}},
    ],
)
def test_schemas_that_allow_the_cut_or_have_nothing_to_cut_are_not_warned(schema):
    assert validate_manifest(edited([("/mcp/tools/0/outputSchema", schema)]), FILES) == []
