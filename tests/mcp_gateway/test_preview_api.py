"""GET /api/tenants/<slug>/tools/preview: the exact tools/list a caller gets, its count and token estimate."""

from __future__ import annotations

import json
import math

import anyio
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tenants import actions
from tests.mcp_gateway.conftest import mcp_client

pytestmark = pytest.mark.django_db
URL = "/api/tenants/acme/tools/preview"


@pytest.fixture
def as_admin(api_client, acme):
    api_client.force_authenticate(get_user_model().objects.get(username="admin"))
    return api_client


def names(body: dict) -> list[str]:
    return [tool["name"] for tool in body["tools"]]


def test_a_role_lists_the_tools_it_reaches_with_count_and_estimate(as_admin, acme, deploy):
    deploy(acme)
    body = as_admin.get(URL, {"roles": "case_reader"}).json()
    assert "acme_cases_find_case" in names(body)
    assert body["count"] == len(body["tools"])
    raw = json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False).encode()
    assert body["estimated_tokens"] == math.ceil(len(raw) / 4)


def test_entries_are_the_wire_json_in_camel_case(as_admin, acme, deploy):
    deploy(acme)
    tool = next(t for t in as_admin.get(URL, {"roles": ""}).json()["tools"] if t["name"] == "acme_cases_echo")
    assert set(tool) >= {"name", "title", "description", "inputSchema", "annotations"}
    assert tool["annotations"] == {"readOnlyHint": False, "destructiveHint": False}
    assert "input_schema" not in tool


def test_read_only_keeps_only_read_only_tools(as_admin, acme, deploy):
    deploy(acme)
    full = names(as_admin.get(URL, {"roles": "case_writer"}).json())
    read_only = names(as_admin.get(URL, {"roles": "case_writer", "read_only": "true"}).json())
    assert "acme_cases_create_case" in full and "acme_cases_create_case" not in read_only
    assert set(read_only) < set(full)


def test_a_member_previews_as_their_own_roles(as_admin, acme, deploy):
    deploy(acme)
    assert (
        as_admin.get(URL, {"member": "reader"}).json() == as_admin.get(URL, {"roles": "case_reader"}).json()
    )


def test_switching_app_tools_off_leaves_only_the_built_ins(as_admin, acme, deploy):
    deploy(acme)
    actions.set_tenant_setting(acme, "customAppsMcpTools", False, acting_user=None)
    assert all(
        not name.startswith("acme_cases_")
        for name in names(as_admin.get(URL, {"roles": "case_writer"}).json())
    )


def test_the_preview_follows_every_page_of_the_listing(as_admin, acme, deploy, settings):
    deploy(acme)
    settings.MCP_PAGE_SIZE = 3
    body = as_admin.get(URL, {"roles": "case_writer"}).json()
    assert body["count"] > 3 and len(set(names(body))) == body["count"]


@pytest.mark.slow
@pytest.mark.parametrize(("username", "mode"), [("reader", "legacy"), ("writer", "auto")])
def test_the_preview_is_exactly_what_the_official_client_lists(
    mcp_url, acme, deploy, make_token, username, mode
):
    deploy(acme)
    _, raw = make_token(acme, username)

    async def listed():
        tools, cursor = [], None
        async with mcp_client(mcp_url(), raw, mode=mode) as client:
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
                if (cursor := page.next_cursor) is None:
                    return tools

    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username="admin"))
    body = client.get(URL, {"member": username}).json()
    assert body["tools"] == anyio.run(listed)


@pytest.mark.parametrize(
    "query",
    [{}, {"roles": "a", "member": "reader"}, {"roles": "Bad Role"}, {"roles": "a", "read_only": "maybe"}],
)
def test_bad_queries_are_400(as_admin, query):
    assert as_admin.get(URL, query).status_code == 400


def test_an_unknown_member_is_404(as_admin):
    assert as_admin.get(URL, {"member": "ghost"}).status_code == 404


def test_plain_members_are_refused(api_client, acme):
    api_client.force_authenticate(get_user_model().objects.get(username="reader"))
    assert api_client.get(URL, {"roles": ""}).status_code == 403


def test_superusers_may_preview(api_client, acme):
    api_client.force_authenticate(get_user_model().objects.get(username="root"))
    assert api_client.get(URL, {"roles": ""}).status_code == 200


def test_the_preview_changes_nothing(as_admin, acme, deploy):
    deploy(acme)
    before = acme.audit_log.count(), type(acme).objects.get(pk=acme.pk).state_version
    as_admin.get(URL, {"member": "writer"})
    assert (acme.audit_log.count(), type(acme).objects.get(pk=acme.pk).state_version) == before


def test_a_roles_list_with_spaces_is_read_as_the_console_and_the_command_read_it(as_admin, acme, deploy):
    deploy(acme)
    tight = as_admin.get(URL, {"roles": "case_reader,case_writer"}).json()

    assert as_admin.get(URL, {"roles": "case_reader, case_writer"}).json() == tight
    assert as_admin.get(URL, {"roles": " case_reader  case_writer ,"}).json() == tight
