"""The app editor: drafts change nothing for callers, Check answers the deploy's problems at their line,
Deploy makes a version through the one deploy action, members get no editor."""

from __future__ import annotations

import html
import json
import re

import pytest

from apps_runtime.models import AppVersion
from console.json_lines import line_of, pointer_lines
from tests.support.apps import cases_manifest

pytestmark = pytest.mark.django_db
EDIT = "/console/acme/apps/cases/edit"


def versions(tenant) -> list[int]:
    return list(AppVersion.objects.for_tenant(tenant).order_by("number").values_list("number", flat=True))


def manifest_text(manifest: dict) -> str:
    return json.dumps(manifest, indent=2)


def broken_name(text: str) -> tuple[str, int]:
    """The manifest with its first tool's name made invalid, and the line that name is on."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"name": "find_case"' in line)
    lines[at] = lines[at].replace("find_case", "Find Case!")
    return "\n".join(lines), at + 1


def _as_browser_posts(page: str) -> dict[str, str]:
    """Each textarea's value as a browser reads it: HTML drops one newline right after <textarea>."""
    found = re.findall(r'<textarea[^>]*name="(file:[^"]+)"[^>]*>(.*?)</textarea>', page, re.S)
    return {name: html.unescape(text.removeprefix("\n")) for name, text in found}


def test_pointers_map_to_the_lines_of_the_text():
    text = '{\n  "a": 1,\n  "b": [\n    {"c": "x/y"},\n    2\n  ],\n  "d~/e": {}\n}'
    lines = pointer_lines(text)
    assert (lines[""], lines["/a"], lines["/b"], lines["/b/0/c"], lines["/b/1"]) == (1, 2, 3, 4, 5)
    assert lines["/d~0~1e"] == 7
    assert line_of("/b/0/missing", lines) == 4 and line_of("/nowhere", lines) == 1
    assert pointer_lines('{"a": [1, ') == {"": 1, "/a": 1, "/a/0": 1}  # a broken text: what was read


def test_check_shows_the_validators_problem_at_its_line_and_deploys_nothing(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    page = client.get(EDIT).content.decode()
    assert 'name="file:app.json"' in page and "Deploy as a new version" in page
    unchanged = client.post(EDIT, {"action": "check", **_as_browser_posts(page)})
    assert 'id="diff">None.' in unchanged.content.decode()  # posting the page back changes nothing
    text, line = broken_name(manifest_text(cases_manifest()))
    checked = client.post(EDIT, {"action": "check", "file:app.json": text})
    body = checked.content.decode()
    assert checked.status_code == 200 and "a deploy would be refused" in body
    assert (
        f'data-line="{line}"' in body and f"app.json line {line}</a> <code>/mcp/tools/0/name</code>" in body
    )
    diff = body[body.index('<pre id="diff">') :].split("</pre>")[0]  # against the deployed version
    assert "--- deployed/app.json" in diff and "+++ draft/app.json" in diff
    assert "-        &quot;name&quot;: &quot;find_case&quot;," in diff
    assert "+        &quot;name&quot;: &quot;Find Case!&quot;," in diff
    assert versions(acme) == [1]
    bad_json = client.post(EDIT, {"action": "check", "file:app.json": '{\n  "name": "cases",\n  oops\n}'})
    assert 'data-line="3"' in bad_json.content.decode() and "is not JSON" in bad_json.content.decode()


def test_a_draft_changes_nothing_until_deployed_then_rolls_back(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    manifest = cases_manifest()
    manifest["mcp"]["tools"][0]["description"] = "Find cases, edited in the browser."
    text = manifest_text(manifest)
    saved = client.post(EDIT, {"action": "save", "file:app.json": text})
    assert saved.status_code == 200 and "No problems: this deploys" in saved.content.decode()
    assert versions(acme) == [1]
    again = client.get(EDIT).content.decode()
    assert "draft saved" in again and "edited in the browser" in again  # the draft, kept server-side
    assert "edited in the browser" not in json.dumps(AppVersion.objects.for_tenant(acme).get().manifest)

    deployed = client.post(EDIT, {"action": "deploy", "file:app.json": text})
    assert deployed.status_code == 302 and versions(acme) == [1, 2]
    active = AppVersion.objects.for_tenant(acme).get(number=2)
    assert active.manifest["mcp"]["tools"][0]["description"] == "Find cases, edited in the browser."
    page = client.get(EDIT).content.decode()
    assert "Deployed cases v2." in page and "draft saved" not in page
    play = client.get("/console/acme/apps/cases/playground", {"tool": "acme_cases_find_case"})
    assert "edited in the browser" in play.content.decode()  # what a model is shown now

    rolled = client.post("/console/acme/apps/cases/rollback")
    assert rolled.status_code == 302
    assert "edited in the browser" not in client.get(EDIT).content.decode()


def test_a_refused_deploy_keeps_the_text_and_shows_the_problems(signed_in, acme, deploy):
    deploy(acme)
    text, line = broken_name(manifest_text(cases_manifest()))
    refused = signed_in("admin").post(EDIT, {"action": "deploy", "file:app.json": text})
    assert refused.status_code == 422 and f'data-line="{line}"' in refused.content.decode()
    assert "Find Case!" in refused.content.decode() and versions(acme) == [1]


def test_members_get_no_editor(signed_in, acme, deploy):
    deploy(acme)
    assert signed_in("writer").get(EDIT).status_code == 404
    assert signed_in("writer").post(EDIT, {"action": "deploy", "file:app.json": "{}"}).status_code == 404
    assert "Edit cases" not in signed_in("writer").get("/console/acme/apps/").content.decode()
    assert signed_in("admin").get("/console/acme/apps/nope/edit").status_code == 404


def test_the_live_check_answers_the_same_findings_as_data(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    page = client.get(EDIT).content.decode()
    assert '<script src="/console/_editor.js" defer></script>' in page and "<script>" not in page
    script = client.get("/console/_editor.js")
    assert script["Content-Type"].startswith("text/javascript") and b"findingsList" in script.content
    text, line = broken_name(manifest_text(cases_manifest()))
    answer = client.post(EDIT, {"action": "check", "file:app.json": text}, HTTP_ACCEPT="application/json")
    body = answer.json()
    assert [(f["pointer"], f["line"], f["warning"]) for f in body["findings"]][0] == (
        "/mcp/tools/0/name",
        line,
        False,
    )
    assert "Find Case!" in body["diff"] and versions(acme) == [1]
