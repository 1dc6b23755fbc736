"""A schema whose references loop without reading deeper into the value is refused at deploy, with
the pointer of the reference that closes the loop; recursion that reads deeper still deploys."""

from __future__ import annotations

import pytest

from apps_runtime.json_schemas import compile_schema
from apps_runtime.manifest import validate_manifest
from apps_runtime.models import App
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of
from tests.support.apps import HANDLERS, cases_manifest

INPUT = "/mcp/tools/0/inputSchema"
QUERY = f"{INPUT}/properties/query"
OUTPUT = "/mcp/tools/1/outputSchema"
RECORD = "/collections/cases/schema"
LOOPS = "without reading any part of the value"

REFUSED = {
    "the root refers to itself": ([(f"{INPUT}/$ref", "#")], f"{INPUT}/$ref"),
    "a property refers to itself": ([(QUERY, {"$ref": "#/properties/query"})], f"{QUERY}/$ref"),
    "two $defs refer to each other": (
        [(f"{INPUT}/$defs", {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}})],
        None,  # either reference closes it, depending on where the search starts
    ),
    "a loop through allOf": (
        [(f"{OUTPUT}/properties/x", {"allOf": [{"$ref": "#/properties/x"}]})],
        f"{OUTPUT}/properties/x/allOf/0/$ref",
    ),
    "a loop through not and an $anchor": (
        [(f"{INPUT}/$defs", {"a": {"$anchor": "A", "not": {"$ref": "#A"}}})],
        f"{INPUT}/$defs/a/not/$ref",
    ),
    "a loop through if and then in a collection schema": (
        [(f"{RECORD}/if", {"$ref": "#"})],
        f"{RECORD}/if/$ref",
    ),
    "$recursiveRef in anyOf": (
        [
            (f"{INPUT}/$schema", "https://json-schema.org/draft/2019-09/schema"),
            (f"{INPUT}/anyOf", [{"$recursiveRef": "#"}]),
        ],
        f"{INPUT}/anyOf/0/$recursiveRef",
    ),
    "draft 7 definitions": (
        [
            (f"{RECORD}/$schema", "http://json-schema.org/draft-07/schema#"),
            (f"{RECORD}/definitions", {"n": {"$ref": "#/definitions/n"}}),
        ],
        f"{RECORD}/definitions/n/$ref",
    ),
}


@pytest.mark.parametrize(("edits", "pointer"), REFUSED.values(), ids=REFUSED.keys())
def test_a_reference_loop_is_refused_at_the_reference_that_closes_it(edits, pointer):
    problems = [p for p in problems_of(edited(edits)) if LOOPS in p.message]
    assert len(problems) == 1, problems
    if pointer is not None:
        assert problems[0].pointer == pointer
    else:
        assert problems[0].pointer in (f"{INPUT}/$defs/a/$ref", f"{INPUT}/$defs/b/$ref")


ACCEPTED = {
    "a tree: each turn reads a child": (
        [(f"{OUTPUT}/properties/children", {"type": "array", "items": {"$ref": "#"}})],
        1,
        {"children": [{"children": []}]},
    ),
    "a chain of $defs without a loop": (
        [
            (f"{INPUT}/$defs", {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}),
            (QUERY, {"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}]}),
        ],
        0,
        {"query": "Ada"},
    ),
    "a linked list through a property": (
        [
            (
                f"{INPUT}/$defs",
                {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            ),
            (f"{INPUT}/properties/head", {"$ref": "#/$defs/node"}),
        ],
        0,
        {"query": "Ada", "head": {"next": {"next": {}}}},
    ),
}


@pytest.mark.parametrize(("edits", "tool", "value"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_recursion_that_reads_deeper_deploys_and_checks_values(edits, tool, value):
    manifest = edited(edits)
    validate_manifest(manifest, FILES)
    key = "outputSchema" if tool == 1 else "inputSchema"
    assert list(compile_schema(manifest["mcp"]["tools"][tool][key]).iter_errors(value)) == []


def test_a_looping_schema_checked_a_value_only_to_give_up_which_is_why_it_is_refused():
    # What every call met before: the validator gives up (RecursionError) with an error id.
    [error] = compile_schema({"type": "object", "$ref": "#"}).iter_errors({})
    assert "cannot be applied" in error.message


@pytest.mark.django_db
def test_the_api_refuses_a_looping_schema_with_its_pointer(acme, api_client, make_token):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(acme, 'admin')[1]}")
    manifest = cases_manifest()
    manifest["mcp"]["tools"][0]["inputSchema"]["$ref"] = "#"
    refused = api_client.post(
        "/api/tenants/acme/apps", {"manifest": manifest, "files": HANDLERS}, format="json"
    )
    assert refused.status_code == 422
    [problem] = refused.json()["problems"]
    assert problem["pointer"] == "/mcp/tools/0/inputSchema/$ref" and LOOPS in problem["message"]
    assert not App.objects.for_tenant(acme).exists()
