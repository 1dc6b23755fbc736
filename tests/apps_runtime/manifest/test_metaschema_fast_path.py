"""The jsonschema-rs fast paths of the deploy validator: as strict as the Python checkers, never fetching.

jsonschema-rs decides only that a document is valid; everything else goes to the Python checkers. So
the verdict and every message must be the same with the fast paths as without them, on valid and
broken schemas and manifests alike (Hypothesis explores both).
"""

from __future__ import annotations

import copy
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import validators

from apps_runtime.json_schemas import (
    SCHEMA_FAULTS,
    FastCheck,
    fast_check,
    fast_metaschema_check,
    is_plain_json,
    metaschema_validator,
)
from apps_runtime.manifest import DeployRejected, embedded_schemas, structure, validate_manifest
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of

INPUT = "/mcp/tools/0/inputSchema"
QUERY = f"{INPUT}/properties/query"
FAST_DIALECTS = [
    validators.Draft202012Validator,
    validators.Draft201909Validator,
    validators.Draft7Validator,
    validators.Draft6Validator,
]
DIALECTS = [*FAST_DIALECTS, validators.Draft4Validator]
EXAMPLES = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# Values on the edges where two implementations can disagree.
EDGE_SCALARS = [
    0, 1, 1.0, -1, 0.5, -0.0, 2, 2.0, 2**53 + 1, 2**64, -(2**64), 10**30, 1e300, 1e-300, True, False,
    None, "", "#", "a", "1a", "a\n", "a b", "x:y", "urn:x:y", "http://e.com/x", "string", "\ud800", "\u00e9",
]  # fmt: skip
SCALARS = st.one_of(
    st.sampled_from(EDGE_SCALARS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)
NAMES = st.sampled_from(["a", "b", "A_1", "1a", "a b", "a\n", "", "x:y", "\u00e9", "a.b-c"])
NUMBERS = st.one_of(st.sampled_from(EDGE_SCALARS[:16]), st.integers(-5, 50))
TYPES = st.sampled_from(["string", "object", "array", "integer", "number", "boolean", "null", "any", "str"])
SUBSCHEMA = st.deferred(lambda: st.one_of(st.booleans(), SCHEMAS))
SUBSCHEMAS = st.lists(SUBSCHEMA, max_size=2)
SCHEMA_MAP = st.dictionaries(NAMES, SUBSCHEMA, max_size=2)
# Each keyword of every draft with values mostly of the right shape, so that many schemas are valid.
KEYWORD_VALUES = {
    **dict.fromkeys(["type", "disallow"], st.one_of(TYPES, st.lists(TYPES, max_size=3))),
    **dict.fromkeys(
        "minLength maxLength minItems maxItems minProperties maxProperties minContains maxContains minimum "
        "maximum multipleOf divisibleBy".split(),
        NUMBERS,
    ),
    **dict.fromkeys(["exclusiveMinimum", "exclusiveMaximum"], st.one_of(NUMBERS, st.booleans())),
    **dict.fromkeys(["properties", "$defs", "definitions", "dependentSchemas"], SCHEMA_MAP),
    **dict.fromkeys(
        "additionalItems unevaluatedItems unevaluatedProperties contains additionalProperties propertyNames "
        "not if then else contentSchema extends".split(),
        SUBSCHEMA,
    ),
    **dict.fromkeys(["allOf", "anyOf", "oneOf", "prefixItems"], SUBSCHEMAS),
    **dict.fromkeys(["$comment", "title", "description", "contentEncoding", "contentMediaType"], NAMES),
    **dict.fromkeys(["$anchor", "$dynamicAnchor"], NAMES),
    **dict.fromkeys("uniqueItems readOnly writeOnly deprecated".split(), st.one_of(st.booleans(), NUMBERS)),
    "required": st.one_of(st.lists(NAMES, max_size=3), st.booleans()),
    "patternProperties": st.dictionaries(st.sampled_from(["^a", "(", "x+"]), SUBSCHEMA, max_size=2),
    "dependentRequired": st.dictionaries(NAMES, st.lists(NAMES, max_size=2), max_size=2),
    "dependencies": st.dictionaries(NAMES, st.one_of(SUBSCHEMA, st.lists(NAMES, max_size=2)), max_size=2),
    "items": st.one_of(SUBSCHEMA, SUBSCHEMAS),
    "enum": st.lists(SCALARS, max_size=3),
    "const": JSON,
    "default": JSON,
    "examples": st.lists(SCALARS, max_size=2),
    "pattern": st.sampled_from(["^a$", "(", "\\d+", "a{2}"]),
    "format": st.sampled_from(["uri", "email", "regex", "x"]),
    "$ref": st.sampled_from(["#", "#/$defs/a", "#a", "#/definitions/a"]),
    "$dynamicRef": st.sampled_from(["#", "#meta", "#a"]),
    "$recursiveRef": st.just("#"),
    "$recursiveAnchor": st.one_of(st.booleans(), NAMES),
    "$id": st.sampled_from(["urn:a", "http://e.com/x", "a b", ""]),
    "id": st.sampled_from(["urn:a", "http://e.com/x"]),
    "$schema": st.sampled_from(["http://json-schema.org/draft-07/schema#", "x"]),
    "$vocabulary": st.dictionaries(st.sampled_from(["urn:a", "a b"]), st.booleans(), max_size=2),
}
SCHEMAS = st.lists(st.sampled_from(sorted(KEYWORD_VALUES)), max_size=4, unique=True).flatmap(
    # now and then a value of any shape, where a type slip is likeliest
    lambda keys: st.fixed_dictionaries({key: st.one_of(KEYWORD_VALUES[key], JSON) for key in keys})
)


def python_finds_no_error(schema: dict, dialect) -> bool:
    try:
        return not list(metaschema_validator(dialect).iter_errors(schema))
    except SCHEMA_FAULTS:  # the deploy reports these as a problem too
        return False


@EXAMPLES
@given(schema=SCHEMAS, dialect=st.sampled_from(DIALECTS))
def test_jsonschema_rs_passes_a_schema_only_when_the_python_metaschema_check_finds_no_error(schema, dialect):
    if fast_metaschema_check(dialect).passes(schema):
        assert python_finds_no_error(schema, dialect), schema


EDGE_SCHEMAS = {
    "draft 4 enum with 1 and 1.0 (jsonschema-rs counts them as two values)": (
        {"type": "object", "enum": [1, 1.0]},
        validators.Draft4Validator,
    ),
    "a tuple where the Python checker wants an array": (
        {"type": "object", "required": ("a",)},
        validators.Draft202012Validator,
    ),
    "a lone surrogate": ({"type": "object", "$anchor": "\ud800"}, validators.Draft202012Validator),
    "a keyword of the wrong type deep down": (
        {"type": "object", "properties": {"a": {"items": {"minLength": "2"}}}},
        validators.Draft202012Validator,
    ),
    "a negative length": ({"type": "object", "maxItems": -(2**70)}, validators.Draft7Validator),
    "a fractional length": ({"type": "object", "minLength": 1.5}, validators.Draft6Validator),
    "a repeated required name": ({"type": "object", "required": ["a", "a"]}, validators.Draft201909Validator),
}


@pytest.mark.parametrize(("schema", "dialect"), EDGE_SCHEMAS.values(), ids=EDGE_SCHEMAS.keys())
def test_schemas_the_python_checker_refuses_are_never_passed_by_jsonschema_rs(schema, dialect):
    assert not python_finds_no_error(schema, dialect)
    assert not fast_metaschema_check(dialect).passes(schema)


@pytest.mark.parametrize("dialect", FAST_DIALECTS, ids=lambda dialect: dialect.__name__)
def test_a_valid_manifest_never_reaches_the_python_checkers(monkeypatch, dialect):
    # Not a timing test: if jsonschema-rs stopped compiling a schema, deploys would quietly be ten
    # times slower and still correct.
    def refuse(*args):
        raise AssertionError("the Python checker ran")

    monkeypatch.setattr(structure, "_VALIDATOR", SimpleNamespace(iter_errors=refuse))
    monkeypatch.setattr(embedded_schemas, "metaschema_validator", refuse)
    validate_manifest(edited([(f"{INPUT}/$schema", dialect.META_SCHEMA["$schema"])]), FILES)


def test_only_plain_json_at_most_64_levels_deep_goes_to_jsonschema_rs():
    nested: dict = {"type": "object"}
    for _ in range(63):
        nested = {"not": nested}
    assert is_plain_json(nested)
    assert not is_plain_json({"not": nested})
    assert not is_plain_json({"enum": (1, 2)})
    assert not is_plain_json({"enum": {1, 2}})


def without_fast_paths(monkeypatch, fn):
    with monkeypatch.context() as patched:
        patched.setattr(FastCheck, "passes", lambda self, instance, plain=False: False)
        return fn()


def verdict(manifest: dict) -> tuple[list[str], list[str]]:
    try:
        warnings = validate_manifest(manifest, FILES)
    except DeployRejected as rejected:
        return [str(p) for p in rejected.problems], [str(w) for w in rejected.warnings]
    return [], [str(w) for w in warnings]


MANIFEST_EDITS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "/name",
                "/access",
                "/routes/GET ~1cases~1{case_id}/timeoutMs",
                "/routes/GET ~1cases~1{case_id}/auth",
                "/mcp/tools/0/name",
                "/mcp/tools/0/description",
                "/mcp/tools/0/annotations/readOnlyHint",
                "/mcp/tools/1/outputSchema/properties/client_name",
                f"{QUERY}/minLength",
                f"{QUERY}/type",
                f"{INPUT}/$schema",
                f"{INPUT}/required",
                f"{INPUT}/$defs",
                "/collections/cases/schema/properties/client_name",
                "/jobs/reindex/runAs",
                "/jobs/reindex/schedule",
            ]
        ),
        JSON,
    ),
    min_size=1,
    max_size=3,
)


SCHEMA_EDITS = st.lists(
    st.tuples(
        st.sampled_from([INPUT, "/mcp/tools/1/outputSchema", "/collections/cases/schema"]),
        SCHEMAS.map(lambda schema: {"type": "object", **schema}),
    ),
    min_size=1,
    max_size=2,
)


@EXAMPLES
@given(edits=st.one_of(MANIFEST_EDITS, SCHEMA_EDITS))
def test_the_deploy_verdict_and_messages_are_the_same_without_the_fast_paths(edits):
    manifest = edited(edits)
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = without_fast_paths(monkeypatch, lambda: verdict(copy.deepcopy(manifest)))
    assert verdict(manifest) == expected


def test_a_draft_4_schema_with_duplicate_enum_values_is_still_refused_at_its_pointer():
    problems = problems_of(
        edited([(f"{INPUT}/$schema", "http://json-schema.org/draft-04/schema#"), (f"{QUERY}/enum", [1, 1.0])])
    )
    assert any(p.pointer == f"{QUERY}/enum" and "non-unique" in p.message for p in problems), problems


class _Recorder(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - the http.server hook
        self.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"type": "object"}')

    def log_message(self, *args):
        pass


@pytest.fixture
def schema_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_jsonschema_rs_never_fetches_a_reference(schema_server):
    remote = {
        "$schema": f"{schema_server}/meta",
        "$id": f"{schema_server}/root",
        "type": "object",
        "properties": {"a": {"$ref": f"{schema_server}/a.json"}, "b": {"$dynamicRef": f"{schema_server}/b"}},
    }
    for dialect in FAST_DIALECTS:
        fast_metaschema_check(dialect).passes(remote)
    never = fast_check(remote, validators.Draft202012Validator, asserted_formats=())
    assert not never.passes({"a": 1})
    with pytest.raises(DeployRejected):
        validate_manifest(edited([(INPUT, remote)]), FILES)
    assert _Recorder.requests == []
