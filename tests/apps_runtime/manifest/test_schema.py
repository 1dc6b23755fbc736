import json

from jsonschema import Draft202012Validator

from apps_runtime.json_schemas import pattern_problem
from apps_runtime.manifest import MANIFEST_SCHEMA
from tests.apps_runtime.manifest.builders import valid_manifest


def _patterns(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            yield from _patterns(value)
    elif isinstance(node, list):
        for item in node:
            yield from _patterns(item)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(MANIFEST_SCHEMA)
    assert MANIFEST_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert MANIFEST_SCHEMA["$id"]


def test_the_schema_is_plain_json_data():
    assert json.loads(json.dumps(MANIFEST_SCHEMA)) == MANIFEST_SCHEMA


def test_every_pattern_compiles_on_re2_as_production_runs_it():
    patterns = list(_patterns(MANIFEST_SCHEMA))

    assert patterns  # the walk found the schema's name rules
    for pattern in patterns:
        assert pattern_problem(pattern) is None, pattern


def test_the_top_level_keys_are_described_for_editors():
    assert MANIFEST_SCHEMA["title"] and MANIFEST_SCHEMA["description"]
    for name, prop in MANIFEST_SCHEMA["properties"].items():
        assert prop.get("title") or prop.get("description") or prop.get("$ref"), name


def test_a_valid_manifest_passes_the_schema_alone():
    assert list(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(valid_manifest())) == []


def test_the_schema_alone_catches_structural_mistakes():
    manifest = valid_manifest()
    manifest["routes"]["GET /cases/search"]["timeoutMs"] = 5
    manifest["unknown"] = True
    errors = list(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(manifest))
    assert sorted(error.validator for error in errors) == ["additionalProperties", "minimum"]
