"""The platform's one JSON Schema factory: nothing fetched, patterns on RE2, never raising."""

from __future__ import annotations

import json
import re

import pytest

from apps_runtime.json_schemas import _SAFE, compile_schema
from tests.support.reference_servers import SECRET, RecordingServer, SilentListener

EVIL = "a" * 40 + "!"  # against ^(a+)+$ Python's re backtracks 2**40 times: years


def messages(schema, instance) -> list[str]:
    return [error.message for error in compile_schema(schema).iter_errors(instance)]


def with_property(subschema: dict) -> dict:
    return {"type": "object", "properties": {"q": subschema}}


def deep(value: dict, depth: int) -> dict:
    for _ in range(depth):
        value = {"a": value}
    return value


def assert_one_error_id(found: list[str]) -> None:
    assert len(found) == 1 and re.search(r"\(error id err_[0-9A-Z]{26}\)", found[0]), found


def test_a_file_reference_is_never_read(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"const": SECRET}))
    found = messages(with_property({"$ref": secret.as_uri()}), {"q": "x"})
    assert_one_error_id(found)
    assert SECRET not in found[0] and str(tmp_path) not in found[0]


def test_an_http_reference_is_never_fetched():
    with RecordingServer() as server:
        found = messages(with_property({"$ref": server.url}), {"q": "x"})
    assert server.paths == []
    assert_one_error_id(found)


def test_a_reference_to_a_server_that_never_answers_does_not_wait():
    with SilentListener() as silent:
        found = messages({"type": "object", "$ref": silent.url}, {})
        assert not silent.was_contacted()
    assert_one_error_id(found)


def test_local_references_and_anchors_still_resolve():
    schema = {
        "type": "object",
        "$defs": {"name": {"$anchor": "name", "type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/name"}, "b": {"$ref": "#name"}, "c": {"$ref": "#"}},
    }
    assert messages(schema, {"a": "x", "b": "y", "c": {"a": "z"}}) == []
    assert len(messages(schema, {"a": 1, "b": 2, "c": {"a": 3}})) == 3


CATASTROPHIC = {
    "pattern": (with_property({"type": "string", "pattern": "^(a+)+$"}), {"q": EVIL}),
    "pattern, draft 7": (
        {"$schema": "http://json-schema.org/draft-07/schema#", **with_property({"pattern": "^(a+)+$"})},
        {"q": EVIL},
    ),
    "patternProperties": (
        {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}},
        {EVIL: "x", "aaaa": "y"},
    ),
    "additionalProperties beside patternProperties": (
        {"type": "object", "patternProperties": {"^(a+)+$": {}}, "additionalProperties": False},
        {EVIL: 1},
    ),
    "unevaluatedProperties beside patternProperties": (
        {"type": "object", "patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False},
        {EVIL: 1},
    ),
    "unevaluatedProperties, draft 2019-09": (
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "type": "object",
            "allOf": [{"patternProperties": {"^(a+)+$": {}}}],
            "unevaluatedProperties": False,
        },
        {EVIL: 1},
    ),
    "propertyNames": ({"type": "object", "propertyNames": {"pattern": "^(a+)+$"}}, {EVIL: 1}),
}


@pytest.mark.parametrize(("schema", "instance"), CATASTROPHIC.values(), ids=CATASTROPHIC.keys())
def test_catastrophic_patterns_finish_with_one_problem(schema, instance):
    # Completing at all is the point: under Python's re each of these runs for years.
    found = messages(schema, instance)
    assert len(found) == 1 and "err_" not in found[0], found


def test_every_keyword_that_runs_a_pattern_runs_it_on_re2():
    for dialect, safe in _SAFE.items():
        for keyword, function in safe.VALIDATORS.items():
            if "re" in function.__code__.co_names:
                assert function.__globals__["re"] is not re, (dialect.__name__, keyword)


def test_the_regex_format_is_checked_by_re2_even_for_deeply_nested_input():
    schema = with_property({"type": "string", "format": "regex"})
    assert messages(schema, {"q": "(" * 5000 + ")" * 5000}) == []  # Python's re: RecursionError
    assert len(messages(schema, {"q": "(a)\\1"})) == 1


def test_patterns_read_ecma_escapes_and_anchor_as_ecma_does():
    assert messages(with_property({"pattern": "^\\u0041\\u{42}$"}), {"q": "AB"}) == []
    assert len(messages(with_property({"pattern": "^\\\\u0041$"}), {"q": "A"})) == 1
    assert len(messages(with_property({"pattern": "^a$"}), {"q": "a\n"})) == 1  # Python's $ would match
    assert messages(with_property({"pattern": "b"}), {"q": "abc"}) == []  # unanchored, as search


BROKEN = {
    "properties not an object": ({"type": "object", "properties": []}, {"a": 1}),
    "non-string $id": ({"$id": 5, "type": "object"}, {}),
    "pointer to nothing": (with_property({"$ref": "#/$defs/missing"}), {"q": 1}),
    "unknown type": (with_property({"type": "strin"}), {"q": 1}),
    "lookahead deployed before RE2": (with_property({"pattern": "(?=a)"}), {"q": "a"}),
    "reference cycle on a deep value": (
        {"type": "object", "properties": {"a": {"$ref": "#"}}},
        deep({"a": {}}, 2000),
    ),
}


@pytest.mark.parametrize(("schema", "instance"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_schema_gives_one_error_with_an_error_id_and_never_raises(schema, instance):
    assert_one_error_id(messages(schema, instance))
    assert compile_schema(schema).is_valid(instance) is False


def test_a_lone_surrogate_in_a_value_is_matched_not_a_fault():
    schema = {"type": "object", "properties": {"q": {"pattern": "^a"}}, "patternProperties": {"x": {}}}
    assert messages(schema, {"q": "\ud800a"}) == ["'\\ud800a' does not match '^a'"]
    assert messages(schema, {"x\udc00": 1, "q": "a"}) == []
