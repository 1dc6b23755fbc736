"""The one template generator: every template and every field type deploys with no problem and no
warning; bad names and types are refused with a reason naming the field."""

from __future__ import annotations

import json

import pytest

from app_templates import FIELD_TYPES, TEMPLATES, Field, TemplateError, parse_field, render
from apps_runtime.manifest import bundle_from_mapping
from apps_runtime.manifest.handlers import check_bundle


def problems_of(files: dict[str, str]) -> list:
    files = dict(files)
    manifest = json.loads(files.pop("app.json"))
    return check_bundle(bundle_from_mapping(manifest, files))


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_passes_the_deploy_validator(template):
    assert problems_of(render(template, "todo")) == []


@pytest.mark.parametrize("kind", FIELD_TYPES)
@pytest.mark.parametrize("required", [True, False])
def test_every_field_type_makes_a_manifest_the_deploy_validator_takes(kind, required):
    files = render("crud", "stock", [Field("label", "string"), Field("value", kind, required=required)])
    assert problems_of(files) == []
    manifest = json.loads(files["app.json"])
    schema = manifest["collections"]["items"]["schema"]
    assert set(schema["properties"]) == {"label", "value"}
    assert ("value" in schema.get("required", [])) is required
    create = next(t for t in manifest["mcp"]["tools"] if t["name"] == "create_item")
    assert create["inputSchema"]["properties"]["value"] == schema["properties"]["value"]


def test_picked_fields_reach_the_handlers_and_the_example_test():
    files = render("crud", "parts", [Field("sku", "string", required=True), Field("count", "integer")])
    assert "FIELDS = ('sku', 'count')" in files["server/items/create.py"]
    assert "STARTS_FALSE = ()" in files["server/items/create.py"]
    assert "FLAG = None" in files["server/items/list.py"]
    assert "REQUIRED = ('sku',)" in files["tests/test_items.py"]
    assert "__" not in "".join(text for path, text in files.items() if path != "app.json").replace(
        "__name__", ""
    )
    listing = json.loads(files["app.json"])["mcp"]["tools"][0]["inputSchema"]["properties"]
    assert "open_only" not in listing  # no done flag to filter on


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ([Field("Bad-Name", "string")], "field 1: 'Bad-Name' is not a field name"),
        ([Field("id", "string")], "field 1: 'id' is the template's own"),
        ([Field("a", "string"), Field("price", "money")], "field 2: 'money' is not a field type"),
        ([Field("a", "string"), Field("a", "integer")], "field 2: 'a' is given twice"),
        ([], "at least one field"),
    ],
)
def test_bad_fields_are_refused_naming_the_field(fields, message):
    with pytest.raises(TemplateError) as refused:
        render("crud", "todo", fields)
    assert any(message in problem for problem in refused.value.problems), refused.value.problems


def test_names_templates_and_field_options_are_checked():
    with pytest.raises(TemplateError, match="not an app name"):
        render("crud", "Todo")
    with pytest.raises(TemplateError, match="not a template"):
        render("kanban", "todo")
    with pytest.raises(TemplateError, match="only crud takes fields"):
        render("blank", "todo", [Field("a", "string")])
    assert parse_field("due:date:required") == Field("due", "date", required=True)
    with pytest.raises(TemplateError, match="name:type"):
        parse_field("due:date:optional")


def test_update_changes_every_field_and_create_leaves_the_done_flag_false():
    files = render("crud", "todo")
    assert "FIELDS = ('title', 'notes', 'done')" in files["server/items/update.py"]
    assert "FIELDS = ('title', 'notes')" in files["server/items/create.py"]
    assert "STARTS_FALSE = ('done',)" in files["server/items/create.py"]
