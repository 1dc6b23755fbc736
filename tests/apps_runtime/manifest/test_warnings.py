import pytest

from apps_runtime.manifest import validate_manifest
from tests.apps_runtime.manifest.builders import DELETE, FILES, edited

TOOL = "/mcp/tools/0"
INPUT = f"{TOOL}/inputSchema"
OUTPUT = "/mcp/tools/1/outputSchema"


def warnings_of(edits):
    return sorted(warning.pointer for warning in validate_manifest(edited(edits), FILES))


WARNED = {
    "$ref in a property": (
        [(f"{INPUT}/properties/query", {"$ref": "#/properties/limit"}), (f"{INPUT}/properties/limit", {})],
        [f"{INPUT}/properties/query/$ref"],
    ),
    "$defs at the root": ([(f"{INPUT}/$defs", {"q": {"type": "string"}})], [f"{INPUT}/$defs"]),
    "definitions at the root": (
        [(f"{INPUT}/definitions", {"q": {"type": "string"}})],
        [f"{INPUT}/definitions"],
    ),
    "$ref and $defs together": (
        [(f"{INPUT}/$defs", {"q": {"type": "string"}}), (f"{INPUT}/properties/query", {"$ref": "#/$defs/q"})],
        [f"{INPUT}/$defs", f"{INPUT}/properties/query/$ref"],
    ),
    "$ref deep inside items": (
        [(f"{INPUT}/properties/tags", {"type": "array", "items": {"anyOf": [{"$ref": "#"}]}})],
        [f"{INPUT}/properties/tags/items/anyOf/0/$ref"],
    ),
    "not in a property": (
        [(f"{INPUT}/properties/query/not", {"const": "x"})],
        [f"{INPUT}/properties/query/not"],
    ),
    "root anyOf": ([(f"{INPUT}/anyOf", [{"required": ["query"]}])], [f"{INPUT}/anyOf"]),
    "root oneOf": ([(f"{INPUT}/oneOf", [{"required": ["query"]}])], [f"{INPUT}/oneOf"]),
    "root allOf": ([(f"{INPUT}/allOf", [{"required": ["query"]}])], [f"{INPUT}/allOf"]),
    "outputSchema $ref": ([(f"{OUTPUT}/properties/x", {"$ref": "#"})], [f"{OUTPUT}/properties/x/$ref"]),
    "no annotations": ([(f"{TOOL}/annotations", DELETE)], [f"{TOOL}/annotations"]),
    "no destructiveHint": ([(f"{TOOL}/annotations/destructiveHint", DELETE)], [f"{TOOL}/annotations"]),
    "no readOnlyHint": ([(f"{TOOL}/annotations/readOnlyHint", DELETE)], [f"{TOOL}/annotations"]),
    "destructive without confirm": ([(f"{TOOL}/annotations/destructiveHint", True)], [f"{TOOL}/confirm"]),
    "destructive with confirm false": (
        [(f"{TOOL}/annotations/destructiveHint", True), (f"{TOOL}/confirm", False)],
        [f"{TOOL}/confirm"],
    ),
    "short description": ([(f"{TOOL}/description", "Finds cases.")], [f"{TOOL}/description"]),
    "description of 19 characters": ([(f"{TOOL}/description", "d" * 19)], [f"{TOOL}/description"]),
}


@pytest.mark.parametrize(("edits", "expected"), list(WARNED.values()), ids=list(WARNED))
def test_client_compatibility_risks_are_warned_about_and_the_deploy_proceeds(edits, expected):
    assert warnings_of(edits) == sorted(expected)


NOT_WARNED = {
    "nested anyOf": [(f"{INPUT}/properties/query", {"anyOf": [{"type": "string"}, {"type": "null"}]})],
    "a property named like a keyword": [
        (f"{INPUT}/properties/not", {"type": "string"}),
        (f"{INPUT}/properties/$ref", {"type": "string"}),
        (f"{INPUT}/properties/definitions", {"type": "string"}),
    ],
    "a keyword word inside data": [(f"{INPUT}/properties/query/enum", [{"$ref": "x"}, "not"])],
    "description of 20 characters": [(f"{TOOL}/description", "d" * 20)],
    "destructive with confirm": [(f"{TOOL}/annotations/destructiveHint", True), (f"{TOOL}/confirm", True)],
    "confirm without destructiveHint true": [(f"{TOOL}/confirm", True)],
    "both hints present, even false": [
        (f"{TOOL}/annotations", {"readOnlyHint": False, "destructiveHint": False})
    ],
}


@pytest.mark.parametrize("edits", list(NOT_WARNED.values()), ids=list(NOT_WARNED))
def test_safe_schemas_and_tools_give_no_warning(edits):
    assert warnings_of(edits) == []


def test_warnings_say_why_and_what_to_change():
    warnings = validate_manifest(
        edited(
            [(f"{TOOL}/annotations", {"readOnlyHint": True}), (f"{INPUT}/properties/query", {"$ref": "#"})]
        ),
        FILES,
    )
    messages = {warning.pointer: warning.message for warning in warnings}
    assert messages[f"{TOOL}/annotations"].startswith("add destructiveHint:")
    assert "inline" in messages[f"{INPUT}/properties/query/$ref"]


def test_several_warnings_are_all_returned():
    edits = [
        (f"{TOOL}/annotations", DELETE),
        (f"{TOOL}/description", "Find."),
        (f"{INPUT}/$defs", {}),
        ("/mcp/tools/1/annotations", DELETE),
    ]
    assert warnings_of(edits) == sorted(
        [f"{TOOL}/annotations", f"{TOOL}/description", f"{INPUT}/$defs", "/mcp/tools/1/annotations"]
    )


def test_a_destructive_tool_without_confirm_is_told_to_add_it():
    warnings = validate_manifest(edited([(f"{TOOL}/annotations/destructiveHint", True)]), FILES)
    assert [(w.pointer, w.message.split(":")[0]) for w in warnings] == [
        (f"{TOOL}/confirm", "destructiveHint is true but confirm is not")
    ]
    assert '"confirm": true' in warnings[0].message
