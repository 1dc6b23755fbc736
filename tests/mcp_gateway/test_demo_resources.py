"""The demo case portal's handbook, case template and "draft a reply" prompt, as a client uses them."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import types

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from tests.mcp_gateway.conftest import mcp_client

CASE_PORTAL = Path(__file__).resolve().parents[2] / "fixtures" / "apps" / "case_portal"


@pytest.fixture
def portal(mcp_url, acme):
    deploy_bundle(acme, read_bundle(CASE_PORTAL), acting_user=None)
    return acme


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_reader_completes_a_case_id_and_drafts_a_reply_with_the_handbook(mcp_url, portal, make_token, mode):
    writer, reader = make_token(portal, "writer")[1], make_token(portal, "reader")[1]

    async def main():
        async with mcp_client(mcp_url(), writer, mode=mode) as client:
            # The writer's tools create no case; the records API is the front-end's way: use the built-in.
            made = await client.call_tool(
                "acme_records_create",
                {
                    "app": "case_portal",
                    "collection": "cases",
                    "data": {"client_name": "Ada", "reference": "C-1"},
                },
            )
            case_id = made.structured_content["id"]
        async with mcp_client(mcp_url(), reader, mode=mode) as client:
            resources = [r.uri for r in (await client.list_resources()).resources]
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            prompt = types.PromptReference(type="ref/prompt", name="acme_case_portal_draft_reply")
            completed = await client.complete(prompt, {"name": "case_id", "value": case_id[:4]})
            tone = await client.complete(prompt, {"name": "tone", "value": "f"})
            draft = await client.get_prompt(
                "acme_case_portal_draft_reply", {"case_id": case_id, "tone": "friendly"}
            )
            case = await client.read_resource(f"case-portal://cases/{case_id}")
        return case_id, resources, templates, completed, tone, draft, case

    case_id, resources, templates, completed, tone, draft, case = anyio.run(main)
    assert resources == ["case-portal://handbook", "ui://case_portal/case_card"]  # the screen: MCP Apps
    assert templates == ["case-portal://cases/{case_id}"]
    assert case_id in completed.completion.values
    assert tone.completion.values == ["formal", "friendly"]
    ask, handbook = draft.messages
    assert f"case {case_id}" in ask.content.text and "friendly" in ask.content.text
    assert handbook.content.resource.uri == "case-portal://handbook"
    assert "two working days" in handbook.content.resource.text
    assert '"client_name": "Ada"' in case.contents[0].text


def test_a_member_without_case_roles_sees_none_of_it(mcp_url, portal, make_token):
    member = make_token(portal, "member")[1]

    async def main():
        async with mcp_client(mcp_url(), member) as client:
            return (
                (await client.list_resources()).resources,
                (await client.list_resource_templates()).resource_templates,
                (await client.list_prompts()).prompts,
            )

    assert anyio.run(main) == ([], [], [])
