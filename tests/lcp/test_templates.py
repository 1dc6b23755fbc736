"""The templates `lcp init` writes: each deploys as it is, with no problem and no warning."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from apps_runtime.manifest import bundle_from_mapping
from apps_runtime.manifest.handlers import check_bundle
from lcp.cli import cli
from lcp.exceptions import LcpError
from lcp.templates import TEMPLATES, render, write_app


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_template_passes_the_deploy_validator_without_a_warning(template):
    files = render(template, "todo")
    manifest = json.loads(files.pop("app.json"))
    assert manifest["name"] == "todo"
    assert check_bundle(bundle_from_mapping(manifest, files)) == []


def test_the_crud_template_has_the_five_tools_a_resource_a_prompt_a_screen_and_a_test():
    files = render("crud", "todo")
    manifest = json.loads(files["app.json"])
    tools = [tool["name"] for tool in manifest["mcp"]["tools"]]
    assert tools == ["list_items", "get_item", "create_item", "update_item", "delete_item"]
    assert manifest["mcp"]["resources"] and manifest["mcp"]["prompts"] and manifest["screens"]
    assert "tests/test_items.py" in files


def test_init_refuses_a_name_the_manifest_would_refuse_and_a_folder_in_use(tmp_path):
    with pytest.raises(LcpError, match="not an app name"):
        write_app("blank", "Todo-App", tmp_path / "x")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(LcpError, match="not empty"):
        write_app("blank", "todo", tmp_path / "used")
    assert write_app("blank", "todo", tmp_path / "new") == ["app.json", "server/hello.py"]


def test_init_takes_the_crud_collections_fields(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(
        cli,
        ["init", "shop", "--template", "crud", "--field", "sku:string:required", "--field", "price:number"],
    )
    assert done.exit_code == 0, done.output
    schema = json.loads((tmp_path / "shop" / "app.json").read_text())["collections"]["items"]["schema"]
    assert schema["required"] == ["sku"] and schema["properties"]["price"] == {"type": "number"}

    refused = CliRunner().invoke(cli, ["init", "bad", "--template", "crud", "--field", "Price:money"])
    assert refused.exit_code == 1
    assert "'Price' is not a field name" in refused.output and "'money' is not a field type" in refused.output
    assert not (tmp_path / "bad").exists()
