"""Output budgets: a result over its tool's budget is cut at an item boundary, or refused with its size."""

from __future__ import annotations

import json

import pytest

from apps_runtime.dispatch import RouteResult
from apps_runtime.json_schemas import compile_schema
from mcp_gateway.tools.catalog.output_budget import OutputBudget
from mcp_gateway.tools.catalog.token_estimate import estimate_tokens, json_bytes
from mcp_gateway.tools.pipeline.results import json_result, route_result


def rows(count: int, width: int = 30) -> list[dict]:
    return [{"id": i, "name": "x" * (width + i % 7)} for i in range(count)]


def sent_json(result) -> dict:
    return json.loads(result.content[0].text)


def test_a_result_within_its_budget_is_untouched():
    value = {"items": rows(10)}
    result = json_result(value, budget=OutputBudget(estimate_tokens(value)))
    assert not result.is_error
    assert result.structured_content == value
    assert len(result.content) == 1


@pytest.mark.parametrize(("count", "tokens"), [(3, 30), (50, 100), (50, 450), (997, 450), (997, 2000)])
def test_a_long_list_keeps_the_most_leading_items_that_fit(count, tokens):
    value = {"items": rows(count), "next_cursor": "abc"}
    assert estimate_tokens(value) > tokens
    budget = OutputBudget(tokens)
    result = json_result(value, budget=budget)
    kept = result.structured_content
    returned = kept["truncated"]["returned"]
    assert kept["truncated"] == {"returned": returned, "total": count}
    assert 0 < returned < count
    assert kept["items"] == value["items"][:returned] and kept["next_cursor"] == "abc"
    assert sent_json(result) == kept
    assert json_bytes(kept) <= budget.max_bytes
    one_more = {**kept, "items": value["items"][: returned + 1]}
    assert json_bytes(one_more) > budget.max_bytes  # the cut is the longest that fits, not just one that does


def test_a_handler_list_is_wrapped_then_cut():
    result = json_result(list(range(5000)), budget=OutputBudget(100))
    kept = result.structured_content
    assert kept["result"] == list(range(kept["truncated"]["returned"]))
    assert kept["truncated"]["total"] == 5000


def test_multibyte_text_counts_in_utf8_bytes():
    value = [{"name": "é" * 100} for _ in range(100)]  # 200 bytes of text per item, 100 characters
    kept = json_result(value, budget=OutputBudget(200)).structured_content
    assert json_bytes(kept) <= 800
    assert kept["truncated"]["returned"] == 3


@pytest.mark.parametrize(
    "arguments, hint",
    [
        ({"offset", "limit"}, "`offset` increased by {n} and `limit` at most {n}."),
        ({"skip"}, "`skip` increased by {n}."),
        ({"limit", "cursor"}, "`limit` at most {n} and page with `cursor`."),
        ({"page_size"}, "`page_size` at most {n} and narrower arguments."),
        ({"cursor"}, "`cursor` continues after the full page"),
        ({"query"}, "call the tool again with narrower arguments."),
    ],
)
def test_the_note_names_the_tools_own_paging_arguments(arguments, hint):
    result = json_result(rows(500), budget=OutputBudget(300, frozenset(arguments)))
    n = result.structured_content["truncated"]["returned"]
    note = result.content[1].text
    assert note.startswith(f'Truncated: returned {n} of 500 items of "result" to stay within the output')
    assert hint.format(n=n) in note


@pytest.mark.parametrize(
    "value, why",
    [
        ({"report": "x" * 5000}, "is not a list"),
        ("x" * 5000, "is not a list"),
        ({"a": rows(100), "b": rows(100)}, "is not a list"),
        ({"items": rows(100), "truncated": False}, 'already has a "truncated" key'),
        ({"items": [{"blob": "x" * 5000}]}, "not even its first item fits"),
        ({"items": [1, 2], "header": "x" * 5000}, "not even its first item fits"),
    ],
)
def test_a_result_that_cannot_be_cut_is_an_error_naming_its_size_and_the_budget(value, why):
    result = json_result(value, budget=OutputBudget(1000))
    assert result.is_error and result.structured_content is None
    text = result.content[0].text
    size = estimate_tokens(value if isinstance(value, dict) else {"result": value})
    assert f"about {size:,} tokens, over this tool's output budget of 1,000 tokens" in text
    assert why in text


def test_a_cut_result_must_still_match_the_outputSchema():
    closed = compile_schema(
        {"type": "object", "properties": {"items": {"type": "array"}}, "additionalProperties": False}
    )
    result = json_result({"items": rows(500)}, closed, OutputBudget(300))
    assert result.is_error
    assert 'would not match its outputSchema (declare a "truncated" property' in result.content[0].text


def test_a_cut_result_is_sent_when_the_outputSchema_declares_truncated():
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array"}, "truncated": {"type": "object"}},
        "additionalProperties": False,
    }
    result = json_result({"items": rows(500)}, compile_schema(schema), OutputBudget(300))
    assert not result.is_error
    assert result.structured_content["truncated"]["total"] == 500


def test_a_handler_error_message_over_the_budget_is_replaced_by_its_size():
    result = route_result(RouteResult(400, {"error": "bad " * 1000}), budget=OutputBudget(500))
    assert result.is_error is True
    assert result.content[0].text == (
        "The result is about 1,000 tokens, over this tool's output budget of 500 tokens, and an error "
        "message is never cut. Call the tool with narrower arguments."
    )
    short = route_result(RouteResult(400, {"error": "bad input"}), budget=OutputBudget(500))
    assert short.content[0].text == "bad input"
