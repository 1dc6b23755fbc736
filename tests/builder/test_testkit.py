"""The handler test kit as ``lcp test`` runs it: routes and tools as members with roles, records,
queued runs and a failed call's trace, with no server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

MANIFEST = {
    "name": "notes",
    "collections": {"notes": {"schema": {"type": "object"}, "read": "user", "write": "role:editor"}},
    "routes": {
        "POST /notes": {"handler": "server/add.py", "auth": "user"},
        "GET /notes/{note_id}": {"handler": "server/get.py", "auth": "user"},
        "POST /jobs/count": {"handler": "server/count.py", "auth": "internal"},
    },
    "mcp": {
        "tools": [
            {
                "name": "add_note",
                "description": "Add a note. Use it to write something down.",
                "route": "POST /notes",
                "inputSchema": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "minLength": 1}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
                "annotations": {"readOnlyHint": False, "destructiveHint": False},
            }
        ]
    },
}
FILES = {
    "server/add.py": (
        "def handle(request):\n"
        "    note = request.records.create('notes', {'text': request.body['text']})\n"
        "    request.enqueue('POST /jobs/count', {'id': note['id']})\n"
        "    return {'id': note['id']}, 201\n"
    ),
    "server/get.py": (
        "def handle(request):\n"
        "    print('reading', request.params['note_id'])\n"
        "    return request.records.get('notes', request.params['note_id'])['data']['missing']\n"
    ),
    "server/count.py": "def handle(request):\n    return {'counted': request.body['id']}\n",
    "tests/test_notes.py": """
def test_an_editor_adds_a_note_and_its_run_is_queued(app):
    added = app.call_tool("add_note", {"text": "milk"}, user="ed", roles=["editor"])
    assert not added.is_error, added.text
    assert app.records("notes") == [{"id": added.data["id"], "text": "milk"}]
    assert [run["route"] for run in app.runs()] == ["POST /jobs/count"]


def test_a_member_without_the_role_may_not_write(app):
    refused = app.call_tool("add_note", {"text": "milk"}, user="max")
    assert refused.is_error and app.records("notes") == []


def test_arguments_are_checked_against_the_input_schema(app):
    assert "text" in app.call_tool("add_note", {"text": ""}, user="ed", roles=["editor"]).text


def test_a_failing_route_leaves_its_trace_and_output(app):
    added = app.call_tool("add_note", {"text": "milk"}, user="ed", roles=["editor"]).data
    answer = app.call_route("GET /notes/{note_id}", params={"note_id": added["id"]}, user="ed")
    assert answer.status == 500 and answer.error_id.startswith("err_")
    error = app.error(answer.error_id)
    assert "KeyError" in error["trace"] and "server/get.py" in error["trace"]
    assert "reading " + added["id"] in error["logs"]
""",
}


def test_the_kit_runs_tools_and_routes_as_members_with_records_runs_and_traces(tmp_path):
    app = tmp_path / "notes"
    for path, text in {"app.json": json.dumps(MANIFEST), **FILES}.items():
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        (app / path).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "lcp", "test", str(app), "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
