"""Prompts and completion of app manifests through the official MCP client, in both eras, in process."""

from __future__ import annotations

import base64

import pytest
from mcp import MCPError, types

from mcp_gateway.models import ToolCallAudit
from tenants.actions import set_tenant_setting
from tests.mcp_gateway.test_resources import MODES, run
from tests.support.resource_app import FILES, HANDBOOK, PNG, resource_manifest


@pytest.fixture
def app(transactional_db, acme, deploy):
    deploy(acme, resource_manifest(), FILES)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kwargs: make_token(app, username, **kwargs)[1]


def create_case(slug, raw, name="Ada Lovelace", mode="legacy") -> str:
    async def work(client):
        result = await client.call_tool("acme_cases_create_case", {"client_name": name})
        return result.structured_content["id"]

    return run(slug, raw, work, mode)


def prompt_error(slug, raw, name, arguments, mode="legacy") -> MCPError:
    async def work(client):
        with pytest.raises(MCPError) as caught:
            await client.get_prompt(name, arguments)
        return caught.value

    return run(slug, raw, work, mode)


async def prompt_names(client):
    return [p.name for p in (await client.list_prompts()).prompts]


@pytest.mark.parametrize("mode", MODES)
def test_each_caller_lists_the_prompts_it_may_use(token, mode):
    everyone = ["acme_cases_greeting", "acme_cases_draft_reply", "acme_cases_reply_from_route"]
    assert run("acme", token("member"), prompt_names, mode) == everyone
    assert run("acme", token("writer"), prompt_names, mode) == [*everyone, "acme_cases_writers_only"]
    assert run("acme", token("root"), prompt_names, mode) == [*everyone, "acme_cases_writers_only"]
    assert run("acme", token("writer", read_only=True), prompt_names, mode) == [
        *everyone,
        "acme_cases_writers_only",
    ]


def test_listed_prompts_declare_their_arguments(token):
    async def work(client):
        return (await client.list_prompts()).prompts

    greeting, draft, _ = run("acme", token("member"), work)
    assert greeting.arguments in (None, [])
    assert (draft.title, draft.description) == ("Draft a reply", "Draft a reply to a client about a case.")
    assert [(a.name, a.description, a.required) for a in draft.arguments] == [
        ("case_id", "The case", True),
        ("tone", "How to sound", False),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_prompt_without_arguments_gives_its_message(token, mode):
    result = run("acme", token("member"), lambda c: c.get_prompt("acme_cases_greeting"), mode)
    (message,) = result.messages
    assert (message.role, message.content.text) == ("user", "Hello, team!")


@pytest.mark.parametrize("mode", MODES)
def test_a_template_fills_arguments_and_embeds_the_handbook_and_an_image(token, mode, app):
    result = run(
        "acme",
        token("member"),
        lambda c: c.get_prompt("acme_cases_draft_reply", {"case_id": "c1", "tone": "friendly"}),
        mode,
    )
    text, resource, image = result.messages
    assert text.content.text == "Draft a friendly reply about case c1. Use {braces} literally."
    assert isinstance(resource.content, types.EmbeddedResource)
    assert (resource.content.resource.uri, resource.content.resource.text) == (
        "cases://handbook",
        HANDBOOK,
    )
    assert isinstance(image.content, types.ImageContent)
    assert base64.b64decode(image.content.data) == PNG and image.content.mime_type == "image/png"
    row = ToolCallAudit.objects.for_tenant(app).get()
    assert (row.method, row.wire_name, row.outcome) == ("prompts/get", "acme_cases_draft_reply", "ok")


@pytest.mark.parametrize("mode", MODES)
def test_arguments_are_checked_before_anything_runs(token, mode, app):
    for arguments in ({}, {"case_id": "c1", "tone": "angry"}, {"case_id": "c1", "mood": "x"}):
        error = prompt_error("acme", token("member"), "acme_cases_draft_reply", arguments, mode)
        assert error.error.code == types.INVALID_PARAMS
    outcomes = set(ToolCallAudit.objects.for_tenant(app).values_list("outcome", flat=True))
    assert outcomes == {"invalid_arguments"}


@pytest.mark.parametrize("mode", MODES)
def test_a_route_prompt_runs_its_route_as_the_caller(token, mode):
    case_id = create_case("acme", token("writer"), mode=mode)
    result = run(
        "acme",
        token("reader"),
        lambda c: c.get_prompt("acme_cases_reply_from_route", {"case_id": case_id}),
        mode,
    )
    assert result.description == "Reply to Ada Lovelace"
    assert [(m.role, m.content.text) for m in result.messages] == [("user", "Write to Ada Lovelace.")]
    # The route's 404 is a not-found error, not messages.
    error = prompt_error("acme", token("reader"), "acme_cases_reply_from_route", {"case_id": "nope"}, mode)
    assert error.error.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", MODES)
def test_hidden_unknown_and_switched_off_prompts_are_invalid_params(token, mode, app):
    for name in ("acme_cases_writers_only", "acme_cases_nope"):
        assert prompt_error("acme", token("reader"), name, {}, mode).error.code == types.INVALID_PARAMS
    set_tenant_setting(app, "customAppsMcpTools", False, acting_user=None)
    assert run("acme", token("writer"), prompt_names, mode) == []
    error = prompt_error("acme", token("writer"), "acme_cases_greeting", {}, mode)
    assert "customAppsMcpTools" in error.error.message


@pytest.mark.parametrize("mode", MODES)
def test_completion_from_an_enum_a_route_and_records(token, mode):
    first = create_case("acme", token("writer"), mode=mode)
    create_case("acme", token("writer"), "Alan Turing", mode=mode)
    prompt = types.PromptReference(type="ref/prompt", name="acme_cases_draft_reply")

    async def work(client):
        tone = await client.complete(prompt, {"name": "tone", "value": "fr"})
        case = await client.complete(prompt, {"name": "case_id", "value": first[:-1]})
        template = types.ResourceTemplateReference(type="ref/resource", uri="cases://cases/{case_id}")
        by_template = await client.complete(template, {"name": "case_id", "value": first})
        record = types.ResourceTemplateReference(type="ref/resource", uri="cases://case_record/{record_id}")
        records = await client.complete(record, {"name": "record_id", "value": ""})
        return tone, case, by_template, records

    tone, case, by_template, records = run("acme", token("reader"), work, mode)
    assert tone.completion.values == ["friendly"]
    assert first in case.completion.values
    assert by_template.completion.values == [first]
    assert len(records.completion.values) == 2 and first in records.completion.values


def test_completion_is_filtered_by_what_the_caller_may_see(token):
    create_case("acme", token("writer"))
    prompt = types.PromptReference(type="ref/prompt", name="acme_cases_draft_reply")

    async def work(client):
        # The member may use the prompt, but the route's records query is refused for it: no values.
        case = await client.complete(prompt, {"name": "case_id", "value": ""})
        record = types.ResourceTemplateReference(type="ref/resource", uri="cases://case_record/{record_id}")
        with pytest.raises(MCPError) as hidden:
            await client.complete(record, {"name": "record_id", "value": ""})
        return case, hidden.value

    case, hidden = run("acme", token("member"), work)
    assert case.completion.values == []
    assert hidden.error.code == -32002
