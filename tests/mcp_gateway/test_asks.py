"""The questions a handler asks and the answers a client gives are untrusted: checked and bounded."""

from __future__ import annotations

import mcp.types as types
import pytest

from apps_runtime.sandbox.runtime import sdk
from mcp_gateway.tools.pipeline.asks import (
    MAX_ANSWER_BYTES,
    MAX_QUESTIONS,
    AnswersRefused,
    AskRefused,
    checked_answers,
    checked_questions,
    kinds_declared,
    missing_capabilities,
)

FORM = {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}}


def test_questions_built_by_the_sdk_become_the_wire_requests():
    asked = checked_questions(
        {"who": sdk.elicit("Name?", FORM), "poem": sdk.sample("A poem"), "r": sdk.list_roots()}
    )

    who, poem, roots = asked.requests.values()
    assert isinstance(who, types.ElicitRequest) and who.params.requested_schema == FORM
    assert isinstance(poem, types.CreateMessageRequest) and poem.params.max_tokens == 500
    assert isinstance(roots, types.ListRootsRequest)
    assert asked.capabilities_needed() == {"elicitation", "sampling", "roots"}


@pytest.mark.parametrize(
    ("questions", "problem"),
    [
        ({}, "questions: must be a non-empty object"),
        ({f"q{i}": sdk.list_roots() for i in range(MAX_QUESTIONS + 1)}, f"over the limit of {MAX_QUESTIONS}"),
        ({"a b": sdk.list_roots()}, "a key is 1 to 64 letters"),
        ({"x": {"method": "tools/call", "params": {}}}, "ask with elicit(), sample() or list_roots()"),
        ({"x": {"method": "sampling/createMessage", "params": {"maxTokens": "lots"}}}, "not a valid"),
        ({"x": sdk.elicit("?", {"type": "string"})}, "a form is an object"),
        ({"x": sdk.elicit("?", {"type": "object", "properties": {"f": {"$ref": "#"}}})}, "x.f: a form field"),
        (
            {
                "x": {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "?", "url": "https://e.x", "elicitationId": "1"},
                }
            },
            "only form elicitation is offered",
        ),
    ],
)
def test_questions_that_break_a_rule_are_refused_naming_them(questions, problem):
    with pytest.raises(AskRefused) as refused:
        checked_questions(questions)
    assert problem in str(refused.value)


def test_what_a_client_did_not_declare_is_named_as_capabilities():
    asked = checked_questions({"who": sdk.elicit("Name?", FORM), "poem": sdk.sample("A poem")})
    declared = types.ClientCapabilities(elicitation=types.ElicitationCapability())

    assert kinds_declared(declared) == ("elicitation",)
    assert missing_capabilities(asked, declared) == types.ClientCapabilities(
        sampling=types.SamplingCapability()
    )
    assert kinds_declared(types.ClientCapabilities(elicitation=types.ElicitationCapability(url={}))) == ()


def test_answers_are_bounded_and_keys_outside_the_alphabet_ignored():
    ok = types.ElicitResult(action="accept", content={"name": "Ada"})

    assert checked_answers({"who": ok, "not a key": ok}) == {
        "who": {"action": "accept", "content": {"name": "Ada"}}
    }
    with pytest.raises(AnswersRefused):
        checked_answers(
            {"who": types.ElicitResult(action="accept", content={"name": "x" * MAX_ANSWER_BYTES})}
        )
