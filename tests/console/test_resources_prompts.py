"""The console shows each app's resources and prompts; Preview as lists them with their token cost."""

from __future__ import annotations

import json
import math

import pytest
from django.contrib.auth import get_user_model

from tests.support.resource_app import FILES, resource_manifest

pytestmark = pytest.mark.django_db


@pytest.fixture
def app(acme, deploy):
    deploy(acme, resource_manifest(), FILES)
    return acme


def test_the_apps_page_lists_each_apps_resources_and_prompts_with_their_rules(signed_in, app):
    page = signed_in("admin").get("/console/acme/apps/").content.decode()
    table = page[page.index('id="app-cases-mcp"') :]
    table = table[: table.index("</table>")]
    for shown in (
        "<code>cases://handbook</code>",
        "<code>cases://cases/{case_id}</code>",
        "template (record)",
        "<code>acme_cases_draft_reply</code>",
        "<code>role:case_writer</code>",  # the writers' note and prompt
    ):
        assert shown in table


def test_the_preview_counts_resources_templates_and_prompts_as_the_api_does(signed_in, api_client, app):
    api_client.force_authenticate(get_user_model().objects.get(username="admin"))
    body = api_client.get("/api/tenants/acme/tools/preview", {"roles": "case_reader"}).json()
    assert [r["uri"] for r in body["resources"]["items"]] == [
        "cases://handbook",
        "cases://logo",
        "cases://summary",
    ]
    assert body["resourceTemplates"]["count"] == 2
    assert [p["name"] for p in body["prompts"]["items"]] == [
        "acme_cases_greeting",
        "acme_cases_draft_reply",
        "acme_cases_reply_from_route",
    ]
    raw = json.dumps(body["prompts"]["items"], separators=(",", ":"), ensure_ascii=False).encode()
    assert body["prompts"]["estimated_tokens"] == math.ceil(len(raw) / 4)
    page = signed_in("admin").get("/console/acme/preview/", {"as": "roles", "roles": "case_reader"})
    html = page.content.decode()
    row = html[html.index('id="list-prompts"') :]
    assert f"<td>{body['prompts']['count']}</td><td>{body['prompts']['estimated_tokens']}</td>" in row
    assert "<code>cases://case_record/{record_id}</code>" in html
