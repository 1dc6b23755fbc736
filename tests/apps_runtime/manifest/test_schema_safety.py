"""Embedded schemas are self-contained and run on RE2: what the deploy refuses, with its pointer."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps_runtime.manifest import validate_manifest
from apps_runtime.models import App
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of
from tests.support.apps import HANDLERS, cases_manifest

INPUT = "/mcp/tools/0/inputSchema"
QUERY = f"{INPUT}/properties/query"
OUTPUT = "/mcp/tools/1/outputSchema"
RECORD = "/collections/cases/schema"
NESTED_REGEX = "(" * 10_000 + "a" + ")" * 10_000  # Python's re: RecursionError (a 500 before)

REFUSED = {
    "$ref to a file": ([(QUERY, {"$ref": "file:///etc/passwd"})], f"{QUERY}/$ref", "points outside"),
    "$ref to a URL": (
        [(f"{OUTPUT}/properties/x", {"$ref": "https://example.com/s.json"})],
        f"{OUTPUT}/properties/x/$ref",
        "points outside",
    ),
    "relative $ref": ([(QUERY, {"$ref": "other.json#/a"})], f"{QUERY}/$ref", "points outside"),
    "$ref in a collection schema": (
        [(f"{RECORD}/properties/client_name", {"$ref": "http://127.0.0.1:9/x"})],
        f"{RECORD}/properties/client_name/$ref",
        "points outside",
    ),
    "$ref hidden in an unknown keyword": (
        [(f"{INPUT}/x-extra", {"$ref": "file:///etc/passwd"})],
        f"{INPUT}/x-extra/$ref",
        "points outside",
    ),
    "remote $dynamicRef": (
        [(QUERY, {"$dynamicRef": "https://example.com/s.json#meta"})],
        f"{QUERY}/$dynamicRef",
        "points outside",
    ),
    "$recursiveRef other than #": (
        [
            (f"{INPUT}/$schema", "https://json-schema.org/draft/2019-09/schema"),
            (QUERY, {"$recursiveRef": "#/properties"}),
        ],
        f"{QUERY}/$recursiveRef",
        "must be '#'",
    ),
    "local $ref to nothing": ([(QUERY, {"$ref": "#/$defs/missing"})], f"{QUERY}/$ref", "points at nothing"),
    "local $ref to a non-schema": (
        [(QUERY, {"$ref": "#/required/0"})],
        f"{QUERY}/$ref",
        "which is not a schema",
    ),
    "$id inside the schema": (
        [(f"{QUERY}/$id", "https://example.com/q")],
        f"{QUERY}/$id",
        "only at the root",
    ),
    "root $id with a fragment, draft 7": (
        [(f"{INPUT}/$schema", "http://json-schema.org/draft-07/schema#"), (f"{INPUT}/$id", "#frag")],
        f"{INPUT}/$id",
        "fragment",
    ),
    "draft-4 id inside the schema": (
        [(f"{INPUT}/$schema", "http://json-schema.org/draft-04/schema#"), (f"{QUERY}/id", "http://e.com/")],
        f"{QUERY}/id",
        "only at the root",
    ),
    "root $schema that is no draft": (
        [(f"{INPUT}/$schema", "https://example.com/my-meta.json")],
        f"{INPUT}/$schema",
        "unknown $schema",
    ),
    "nested $schema that is no draft": (
        [(f"{QUERY}/$schema", "http://127.0.0.1:9/meta")],
        f"{QUERY}/$schema",
        "unknown $schema",
    ),
    "lookahead in a pattern": (
        [(f"{QUERY}/pattern", "^(?=.*\\d)\\w+$")],
        f"{QUERY}/pattern",
        "not supported",
    ),
    "backreference in a collection pattern": (
        [(f"{RECORD}/properties/client_name/pattern", "(a)\\1")],
        f"{RECORD}/properties/client_name/pattern",
        "not supported",
    ),
    "lookbehind in a patternProperties key": (
        [(f"{INPUT}/patternProperties", {"(?<!x)y": {"type": "string"}})],
        f"{INPUT}/patternProperties/(?<!x)y",
        "not supported",
    ),
    "lookahead in propertyNames": (
        [(f"{OUTPUT}/propertyNames", {"pattern": "^(?!_)"})],
        f"{OUTPUT}/propertyNames/pattern",
        "not supported",
    ),
    "deeply nested groups": ([(f"{QUERY}/pattern", NESTED_REGEX)], f"{QUERY}/pattern", "at most 1000"),
    "a pattern over the length limit": (
        [(f"{QUERY}/pattern", "a" * 1001)],
        f"{QUERY}/pattern",
        "at most 1000",
    ),
}


@pytest.mark.parametrize(("edits", "pointer", "phrase"), REFUSED.values(), ids=REFUSED.keys())
def test_what_a_schema_may_not_hold_is_refused_at_its_pointer(edits, pointer, phrase):
    problems = problems_of(edited(edits))
    assert any(p.pointer == pointer and phrase in p.message for p in problems), problems


def test_an_unsupported_pattern_says_what_to_write_instead():
    [problem] = problems_of(edited([(f"{QUERY}/pattern", "(?=a)")]))
    assert problem.message.endswith("patterns run on RE2 syntax (no lookaround or backreferences)")
    assert "regex feature that is not supported" in problem.message


ACCEPTED = {
    "local $ref into $defs": [
        (f"{INPUT}/$defs", {"q": {"type": "string"}}),
        (QUERY, {"$ref": "#/$defs/q"}),
    ],
    "$ref to an $anchor": [
        (f"{INPUT}/$defs", {"q": {"$anchor": "q", "type": "string"}}),
        (QUERY, {"$ref": "#q"}),
    ],
    "recursive $ref to the root": [(f"{OUTPUT}/properties/child", {"$ref": "#"})],
    "a pointer with escapes": [
        (f"{INPUT}/$defs", {"a/b": {"type": "string"}}),
        (QUERY, {"$ref": "#/$defs/a~1b"}),
    ],
    "$dynamicRef to a $dynamicAnchor": [
        (f"{INPUT}/$dynamicAnchor", "node"),
        (f"{OUTPUT}/properties/x", {"$ref": "#"}),
        (f"{INPUT}/properties/more", {"$dynamicRef": "#node"}),
    ],
    "root $id as a name": [
        (f"{INPUT}/$id", "urn:case-portal:find-case"),
        (QUERY, {"$ref": "#/$defs/q"}),
        (f"{INPUT}/$defs", {"q": {"type": "string"}}),
    ],
    "draft 7 with definitions": [
        (f"{RECORD}/$schema", "http://json-schema.org/draft-07/schema#"),
        (f"{RECORD}/definitions", {"n": {"type": "string"}}),
        (f"{RECORD}/properties/client_name", {"$ref": "#/definitions/n"}),
    ],
    "ECMA escapes and classes": [(f"{QUERY}/pattern", "^[\\w.\\-]+@\\d{1,3}\\u00e9?$")],
    "named groups and Unicode classes": [(f"{QUERY}/pattern", "^(?<word>\\p{L}+)$")],
    "refs inside data are data": [
        (f"{QUERY}/default", {"$ref": "http://example.com/x"}),
        (f"{QUERY}/examples", [{"$id": "x#y", "pattern": "(?=a)"}]),
        (f"{QUERY}/enum", [{"$ref": "file:///etc/passwd"}]),
    ],
    "properties named like keywords": [
        (f"{INPUT}/properties/$ref", {"type": "string"}),
        (f"{INPUT}/properties/pattern", {"type": "string"}),
        (f"{INPUT}/properties/$id", {"type": "string"}),
    ],
}


@pytest.mark.parametrize("edits", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_self_contained_schemas_deploy(edits):
    validate_manifest(edited(edits), FILES)


def bad_bundle(tmp_path: Path) -> str:
    manifest = cases_manifest()
    echo = manifest["mcp"]["tools"][3]["inputSchema"]["properties"]
    echo["thing"] = {"type": "string", "pattern": NESTED_REGEX}
    echo["count"] = {"$ref": "file:///etc/passwd"}
    (tmp_path / "app.json").write_text(json.dumps(manifest))
    for path, text in HANDLERS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return str(tmp_path)


EXPECTED_LINES = [
    "/mcp/tools/3/inputSchema/properties/count/$ref: ",
    "/mcp/tools/3/inputSchema/properties/thing/pattern: ",
]


@pytest.mark.django_db
def test_the_deploy_command_lists_schema_problems_with_their_pointers(acme, tmp_path):
    # CommandError is what makes manage.py exit 1; before, the nested pattern raised RecursionError.
    out = StringIO()
    with pytest.raises(CommandError, match="deploy refused: 2 problems"):
        call_command("deploy", "acme", bad_bundle(tmp_path), stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    assert [line[: len(prefix)] for line, prefix in zip(lines, EXPECTED_LINES, strict=True)] == EXPECTED_LINES
    assert not App.objects.for_tenant(acme).exists()


@pytest.mark.django_db
def test_the_api_answers_422_for_a_deeply_nested_pattern(acme, api_client, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    manifest = cases_manifest()
    manifest["collections"]["cases"]["schema"]["properties"]["reference"]["pattern"] = NESTED_REGEX
    refused = api_client.post(
        "/api/tenants/acme/apps", {"manifest": manifest, "files": HANDLERS}, format="json"
    )
    assert refused.status_code == 422, refused.content[:300]
    [problem] = refused.json()["problems"]
    assert problem["pointer"] == "/collections/cases/schema/properties/reference/pattern"
