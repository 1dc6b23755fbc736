"""Tools page and Preview as: what the gateway holds, and exactly what one caller lists."""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tenants import actions
from tests.support.apps import cases_manifest

pytestmark = pytest.mark.django_db
PREVIEW = "/console/acme/preview/"


def preview_json(response) -> list[dict]:
    body = response.content.decode()
    start = body.index('<pre id="preview-json"><code>') + len('<pre id="preview-json"><code>')
    return json.loads(html.unescape(body[start : body.index("</code></pre>", start)]))


def api_preview(**query) -> dict:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username="admin"))
    return client.get("/api/tenants/acme/tools/preview", query).json()


def test_the_tools_page_lists_every_tool_with_wire_name_annotations_and_reach(signed_in, acme, deploy):
    deploy(acme)
    body = signed_in("admin").get("/console/acme/tools/").content.decode()
    assert "<code>acme_records_query</code>" in body  # built-ins too
    assert "<code>acme_cases_find_case</code>" in body
    assert "members with any of: case_reader, case_writer" in body
    assert "<code>readOnlyHint</code>: true" in body
    assert "16 tools" in body
    search_row = body[body.index("<code>acme_search_tools</code>") :].split("</tr>")[0]
    assert "finds only the tools the caller may see and call" in search_row
    assert "records checked" not in search_row  # search_tools reads no records


def test_the_tools_page_marks_the_tools_that_ask_the_user_first(signed_in, acme, deploy):
    manifest = cases_manifest()
    create = next(tool for tool in manifest["mcp"]["tools"] if tool["name"] == "create_case")
    create["confirm"] = True
    deploy(acme, manifest)

    body = signed_in("admin").get("/console/acme/tools/").content.decode()

    row = body[body.index("<code>acme_cases_create_case</code>") :]
    assert "asks to confirm" in row[: row.index("</tr>")]
    assert body.count("asks to confirm") == 1


def test_the_tools_page_says_when_app_tools_are_off(signed_in, acme, deploy):
    deploy(acme)
    actions.set_tenant_setting(acme, "customAppsMcpTools", False, acting_user=None)
    assert "App tools are switched off" in signed_in("admin").get("/console/acme/tools/").content.decode()


def test_the_tools_page_names_the_roles_of_app_and_route_when_both_restrict(signed_in, acme, deploy):
    deploy(acme, cases_manifest(access="role:staff"))
    body = signed_in("admin").get("/console/acme/tools/").content.decode()
    assert "one of (staff) for the app and one of (case_reader, case_writer) for the route" in body


def test_previewing_a_set_of_roles_shows_the_same_listing_as_the_api(signed_in, acme, deploy):
    deploy(acme)
    response = signed_in("admin").get(PREVIEW, {"as": "roles", "roles": "case_reader"})
    assert response.status_code == 200
    expected = api_preview(roles="case_reader")
    assert preview_json(response) == expected["tools"]
    body = response.content.decode()
    assert f'<dd id="preview-count">{expected["count"]}</dd>' in body
    assert f'<dd id="preview-tokens">{expected["estimated_tokens"]}</dd>' in body
    assert "divided by 4" in body  # the estimate says how it is made


def test_previewing_a_member_read_only_matches_the_api(signed_in, acme, deploy):
    deploy(acme)
    response = signed_in("admin").get(PREVIEW, {"as": "member", "member": "writer", "read_only": "on"})
    assert preview_json(response) == api_preview(member="writer", read_only="true")["tools"]
    assert "writer, read-only" in response.content.decode()


def test_previewing_a_token_uses_the_tokens_own_read_only_flag(signed_in, acme, deploy, make_token):
    deploy(acme)
    token, _ = make_token(acme, "writer", read_only=True)
    response = signed_in("admin").get(PREVIEW, {"as": "token", "token": token.pk})
    assert preview_json(response) == api_preview(member="writer", read_only="true")["tools"]


def test_a_revoked_token_cannot_be_chosen(signed_in, acme, make_token):
    token, _ = make_token(acme, "writer")
    actions.revoke_token(token, acting_user=None)
    response = signed_in("admin").get(PREVIEW, {"as": "token", "token": token.pk})
    assert response.status_code == 400
    assert 'id="preview-result"' not in response.content.decode()


def test_the_preview_shows_the_effect_of_switching_app_tools(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    body = client.get(PREVIEW, {"as": "roles", "roles": "case_writer"}).content.decode()
    assert "Switched off, this caller would get 8 tools" in body
    actions.set_tenant_setting(acme, "customAppsMcpTools", False, acting_user=None)
    response = client.get(PREVIEW, {"as": "roles", "roles": "case_writer"})
    assert "Switched on, it would get 16 tools" in response.content.decode()
    assert len(preview_json(response)) == 8


def test_the_preview_warns_when_the_endpoint_is_off(signed_in, acme):
    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=None)
    body = signed_in("admin").get(PREVIEW, {"as": "roles", "roles": ""}).content.decode()
    assert "The endpoint would refuse this caller" in body


@pytest.mark.parametrize(
    "query",
    [
        {"as": "roles", "roles": "Not A Role"},
        {"as": "member", "member": ""},
        {"as": "member", "member": "ghost"},
        {"as": "token", "token": "99999"},
        {"as": "nobody"},
    ],
)
def test_bad_choices_are_form_errors(signed_in, acme, query):
    response = signed_in("admin").get(PREVIEW, query)
    assert response.status_code == 400
    assert 'id="preview-result"' not in response.content.decode()


def test_the_preview_page_without_a_choice_shows_only_the_form(signed_in, acme):
    response = signed_in("admin").get(PREVIEW)
    assert response.status_code == 200
    assert 'name="as"' in response.content.decode()


def test_the_preview_shows_the_token_cost_of_each_discovery_mode(signed_in, acme, deploy):
    manifest = cases_manifest()
    manifest["mcp"] = {"tools": _pin_first(manifest)}
    deploy(acme, manifest)
    client = signed_in("admin")
    body = client.get(PREVIEW, {"as": "roles", "roles": "case_writer"}).content.decode()
    listed = api_preview(roles="case_writer")
    assert f'<tr id="mode-list"><th scope="row"><code>list</code></th><td>{listed["count"]}</td>' in body
    assert f"<td>{listed['estimated_tokens']}</td></tr>" in body
    actions.set_tenant_setting(acme, "toolDiscovery", "search", acting_user=None)
    response = client.get(PREVIEW, {"as": "roles", "roles": "case_writer"})
    searched = api_preview(roles="case_writer")
    pinned_and_builtins = [t["name"] for t in preview_json(response)]
    assert pinned_and_builtins[-1] == "acme_cases_find_case" and len(pinned_and_builtins) == 9
    body = response.content.decode()
    assert (
        f'<tr id="mode-search"><th scope="row"><code>search</code></th><td>{searched["count"]}</td>' in body
    )
    assert searched["estimated_tokens"] < listed["estimated_tokens"]
    assert "(now: search)" in body and "each answer carries about" in body


def _pin_first(manifest: dict) -> list[dict]:
    tools = [dict(t) for t in manifest["mcp"]["tools"]]
    tools[0]["pinned"] = True
    return tools
