"""`manage.py deploy` says what to do when given the wrong path."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps_runtime.models import App

pytestmark = pytest.mark.django_db
CASE_PORTAL = Path(__file__).resolve().parents[2] / "fixtures" / "apps" / "case_portal"


def test_deploying_the_manifest_file_says_to_pass_the_folder_that_holds_it(make_tenant):
    tenant = make_tenant("acme")
    out = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("deploy", "acme", str(CASE_PORTAL / "app.json"), stdout=out)
    assert out.getvalue().splitlines() == [
        f"/: '{CASE_PORTAL / 'app.json'}' is not a .zip archive: pass '{CASE_PORTAL}' "
        "(the folder that holds app.json) or a .zip of it"
    ]
    assert not App.objects.for_tenant(tenant).exists()


def test_deploying_any_other_file_that_is_not_a_zip_names_the_bundle_folder(make_tenant, tmp_path):
    make_tenant("acme")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a bundle")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("deploy", "acme", str(notes), stdout=out)
    assert "pass the bundle folder (the folder that holds app.json) or a .zip of it" in out.getvalue()


def test_a_one_tool_app_is_live_with_1_tool(make_tenant, tmp_path):
    make_tenant("acme")
    manifest = {
        "name": "solo",
        "routes": {"GET /x": {"handler": "x.py", "auth": "user"}},
        "mcp": {
            "tools": [
                {
                    "name": "only",
                    "description": "The only tool of this app, for the message.",
                    "route": "GET /x",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True, "destructiveHint": False},
                }
            ]
        },
    }
    (tmp_path / "app.json").write_text(json.dumps(manifest))
    (tmp_path / "x.py").write_text("def handle(request):\n    return {}\n")
    err = StringIO()
    call_command("deploy", "acme", str(tmp_path), stdout=StringIO(), stderr=err)
    assert err.getvalue().strip() == "solo v1 is live (1 tool)"
