"""Resources of app manifests through the official MCP client, in both protocol eras, connected in
process (``mcp_gateway.transport.in_process``)."""

from __future__ import annotations

import base64
import json

import anyio
import pytest
from mcp import MCPError, types

from mcp_gateway.models import ToolCallAudit
from mcp_gateway.transport.in_process import connect
from tenants.actions import set_tenant_setting
from tests.support.resource_app import FILES, HANDBOOK, PNG, resource_manifest

MODES = ["legacy", "2026-07-28"]


@pytest.fixture
def app(transactional_db, acme, deploy):
    deploy(acme, resource_manifest(), FILES)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kwargs: make_token(app, username, **kwargs)[1]


def run(slug, raw, work, mode="legacy"):
    async def main():
        async with connect(slug, raw, mode=mode) as client:
            return await work(client)

    return anyio.run(main)


async def listing(client):
    resources = (await client.list_resources()).resources
    templates = (await client.list_resource_templates()).resource_templates
    return [r.uri for r in resources], [t.uri_template for t in templates]


def read(slug, raw, uri, mode="legacy"):
    return run(slug, raw, lambda client: client.read_resource(uri), mode)


def read_error(slug, raw, uri, mode="legacy") -> MCPError:
    async def work(client):
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        return caught.value

    return run(slug, raw, work, mode)


@pytest.mark.parametrize("mode", MODES)
def test_each_caller_lists_the_resources_and_templates_it_may_read(token, mode):
    everyone = ["cases://handbook", "cases://logo", "cases://summary"]
    templates = ["cases://cases/{case_id}", "cases://case_record/{record_id}"]
    assert run("acme", token("member"), listing, mode) == (everyone, [])
    assert run("acme", token("reader"), listing, mode) == (everyone, templates)
    writer = ["cases://handbook", "cases://logo", "cases://writers_note", "cases://summary"]
    assert run("acme", token("writer"), listing, mode) == (writer, templates)
    assert run("acme", token("root"), listing, mode) == (writer, templates)
    # Resources only read: a read-only token sees what its user sees.
    assert run("acme", token("writer", read_only=True), listing, mode) == (writer, templates)


def test_listed_resources_carry_wire_names_titles_and_mime_types(token):
    async def work(client):
        return (await client.list_resources()).resources, (
            await client.list_resource_templates()
        ).resource_templates

    resources, templates = run("acme", token("reader"), work)
    handbook, logo, summary = resources
    assert (handbook.name, handbook.title, handbook.mime_type, handbook.description) == (
        "acme_cases_handbook",
        "Handbook",
        "text/markdown",
        "How we answer clients.",
    )
    assert (logo.name, logo.mime_type) == ("acme_cases_logo", "image/png")
    assert summary.mime_type == "application/json"
    assert [(t.name, t.mime_type) for t in templates] == [
        ("acme_cases_case", "application/json"),
        ("acme_cases_case_record", "application/json"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_text_file_and_a_binary_file_are_read(token, mode):
    text = read("acme", token("member"), "cases://handbook", mode).contents
    assert [(c.uri, c.mime_type, c.text) for c in text] == [("cases://handbook", "text/markdown", HANDBOOK)]
    (blob,) = read("acme", token("member"), "cases://logo", mode).contents
    assert (blob.mime_type, base64.b64decode(blob.blob)) == ("image/png", PNG)


@pytest.mark.parametrize("mode", MODES)
def test_a_route_resource_runs_the_route_as_the_caller(token, mode, app):
    (contents,) = read("acme", token("reader"), "cases://summary", mode).contents
    assert json.loads(contents.text) == {"cases": 0, "user": "reader"}
    row = ToolCallAudit.objects.for_tenant(app).get()
    assert (row.method, row.wire_name, row.app_name, row.outcome) == (
        "resources/read",
        "acme_cases_summary",
        "cases",
        "ok",
    )


@pytest.mark.parametrize("mode", MODES)
def test_templates_read_one_case_through_its_route_and_as_a_record(token, mode):
    writer = token("writer")

    async def create(client):
        result = await client.call_tool("acme_cases_create_case", {"client_name": "Ada"})
        return result.structured_content["id"]

    case_id = run("acme", writer, create, mode)
    (by_route,) = read("acme", token("reader"), f"cases://cases/{case_id}", mode).contents
    assert json.loads(by_route.text) == {"client_name": "Ada"}
    (record,) = read("acme", token("reader"), f"cases://case_record/{case_id}", mode).contents
    assert json.loads(record.text)["data"] == {"client_name": "Ada"}
    assert json.loads(record.text)["id"] == case_id


@pytest.mark.parametrize("mode", MODES)
def test_unknown_hidden_and_missing_resources_are_not_found(token, mode):
    code = -32602 if mode == "2026-07-28" else -32002
    for uri in (
        "cases://nothing",
        "other://handbook",
        "cases://writers_note",
        "cases://cases/zz",
    ):
        assert read_error("acme", token("reader"), uri, mode).error.code == code
    # A member without the collection's read role: the templates are hidden and refused alike.
    assert read_error("acme", token("member"), "cases://case_record/x", mode).error.code == code


def test_switching_app_tools_off_hides_app_resources_and_says_so_on_read(token, app):
    set_tenant_setting(app, "customAppsMcpTools", False, acting_user=None)
    assert run("acme", token("writer"), listing) == ([], [])
    error = read_error("acme", token("writer"), "cases://handbook")
    assert "customAppsMcpTools" in error.error.message


def test_lists_are_private_to_the_caller_with_a_ttl_in_the_2026_era(token):
    async def work(client):
        return await client.list_resources(), await client.list_resource_templates()

    resources, templates = run("acme", token("reader"), work, "2026-07-28")
    assert (resources.cache_scope, templates.cache_scope) == ("private", "private")
    assert resources.ttl_ms > 0 and templates.ttl_ms > 0


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_result_embeds_a_resource_of_its_app(token, mode):
    result = run("acme", token("member"), lambda client: client.call_tool("acme_cases_attach", {}), mode)
    text, embedded = result.content
    assert text.text == "The note:"
    assert isinstance(embedded, types.EmbeddedResource)
    assert (embedded.resource.uri, embedded.resource.text) == ("cases://notes/today", "Call Ada.")
