"""The playground beyond tools: an app's resources read and prompts got as the admin, as a client gets
them; its screens on the front-end path's host page; and a result cut by the output budget, labelled."""

from __future__ import annotations

import json

import pytest

from app_templates import render
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from mcp_gateway.models import ToolCallAudit
from tenants import actions
from tests.support.resource_app import FILES, HANDBOOK, resource_manifest

pytestmark = pytest.mark.django_db
TODO = "/console/acme/apps/todo/playground"
CASES = "/console/acme/apps/cases/playground"


@pytest.fixture
def todo(acme):
    files = render("crud", "todo")
    manifest = json.loads(files.pop("app.json"))
    deploy_bundle(acme, bundle_from_mapping(manifest, files), acting_user=None)
    return acme


def test_a_resource_is_read_as_the_admin_and_shown_as_a_client_gets_it(signed_in, todo):
    client = signed_in("admin")
    picked = client.get(TODO, {"resource": "acme_todo_guide"}).content.decode()
    assert 'id="read-form"' in picked and 'value="todo://guide"' in picked
    assert (
        "As a client lists it: about" in picked
        and "&quot;mimeType&quot;: &quot;text/markdown&quot;" in picked
    )
    read = client.post(TODO, {"resource": "acme_todo_guide", "uri": "todo://guide"})
    body = read.content.decode()
    assert read.status_code == 200 and "Contents, as a client gets them" in body
    assert "todo://guide (text/markdown)" in body and "# How to keep the list" in body
    assert "&quot;contents&quot;" in body  # the wire JSON
    row = ToolCallAudit.objects.for_tenant(todo).get()
    assert (row.method, row.user.username, row.outcome) == ("resources/read", "admin", "ok")


def test_a_prompt_is_got_with_its_arguments(signed_in, todo):
    client = signed_in("admin")
    picked = client.get(TODO, {"prompt": "acme_todo_review_items"}).content.decode()
    assert 'name="arg:focus"' in picked
    assert (
        "As a client lists it: about" in picked
        and "&quot;name&quot;: &quot;acme_todo_review_items&quot;" in picked
    )
    body = client.post(
        TODO, {"prompt": "acme_todo_review_items", "arg:focus": "the kitchen"}
    ).content.decode()
    assert "Messages, as a client gets them" in body
    assert "user: text" in body and "Focus: the kitchen." in body
    assert "user: resource todo://guide" in body  # the guide, embedded
    assert ToolCallAudit.objects.for_tenant(todo).get().method == "prompts/get"


def test_templates_blobs_and_refusals_are_the_gateways(signed_in, acme, deploy):
    deploy(acme, resource_manifest(), FILES)
    client = signed_in("admin")
    handbook = client.post(CASES, {"resource": "acme_cases_handbook", "uri": "cases://handbook"})
    assert HANDBOOK.split("\n")[0] in handbook.content.decode()
    logo = client.post(CASES, {"resource": "acme_cases_logo", "uri": "cases://logo"}).content.decode()
    assert "binary, 48 bytes" in logo
    missing = client.post(CASES, {"resource": "acme_cases_case", "uri": "cases://cases/nope"})
    assert missing.status_code == 422 and 'id="refused"' in missing.content.decode()
    elsewhere = client.post(CASES, {"resource": "acme_cases_handbook", "uri": "other://handbook"})
    assert elsewhere.status_code == 422 and "is not a resource of cases" in elsewhere.content.decode()
    unfilled = client.post(CASES, {"prompt": "acme_cases_draft_reply", "arg:tone": "friendly"})
    assert unfilled.status_code == 422 and "missing required argument" in unfilled.content.decode()
    assert client.get(CASES, {"resource": "acme_todo_guide"}).status_code == 404  # not this app's
    assert client.get(CASES, {"prompt": "nope"}).status_code == 404


def test_screens_open_on_the_host_page_and_a_read_only_call_links_to_its_screen(signed_in, todo):
    client = signed_in("admin")
    page = client.get(TODO).content.decode()
    assert 'href="/t/acme/apps/todo/_screens/item_card"' in page
    created = client.post(
        TODO, {"tool": "acme_todo_create_item", "arg:title": "Fix the tap"}
    ).content.decode()
    assert 'id="screen-link"' not in created  # create_item shows no screen
    item_id = _last_id(created)
    got = client.post(TODO, {"tool": "acme_todo_get_item", "arg:item_id": item_id}).content.decode()
    link = f'href="/t/acme/apps/todo/_screens/item_card?item_id={item_id}"'
    assert link in got
    host = client.get(f"/t/acme/apps/todo/_screens/item_card?item_id={item_id}")
    assert host.status_code == 200 and "frame-ancestors 'none'" in host["Content-Security-Policy"]


def _last_id(body: str) -> str:
    structured = body[body.index('<pre id="structured">') :].split("</pre>")[0]
    return json.loads(structured.removeprefix('<pre id="structured">').replace("&quot;", '"'))["id"]


def test_a_result_cut_by_the_output_budget_says_how_much_was_cut(signed_in, todo):
    actions.set_tenant_setting(todo, "maxOutputTokens", 100, acting_user=None)
    client = signed_in("admin")
    for n in range(12):
        client.post(
            TODO, {"tool": "acme_todo_create_item", "arg:title": f"Item number {n}", "arg:notes": "x" * 40}
        )
    body = client.post(TODO, {"tool": "acme_todo_list_items"}).content.decode()
    label = body[body.index('id="truncated"') :].split("</p>")[0]
    assert "Truncated by the output budget:" in label and "of 12 items returned" in label
    returned = int(label.split("budget: ")[1].split(" of")[0])
    assert 0 < returned < 12 and f"{12 - returned} cut" in label
    assert "Truncated: returned" in body  # the note a model reads, in the text content
    untouched = client.post(TODO, {"tool": "acme_todo_list_items", "arg:limit": "1"}).content.decode()
    assert 'id="truncated"' not in untouched
