"""The console's agent pages: admins define agents and store keys; members chat, approve, cancel."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from pydantic_ai.messages import ModelResponse, TextPart

from agents.models import Agent, AgentRun, ProviderKey
from tests.agents.conftest import call, run_now, script, tool_returns

CLOSE = "acme_cases_close_case"


@pytest.fixture
def signed_in(acme):
    def sign_in(username: str) -> Client:
        client = Client()
        client.force_login(get_user_model().objects.get(username=username))
        return client

    return sign_in


def test_an_admin_defines_an_agent_and_stores_a_key_in_the_console(acme, signed_in):
    admin = signed_in("admin")
    page = admin.get("/console/acme/agents/").content.decode()
    assert "Define an agent" in page and "http://127.0.0.1:9/v1" in page

    stored = admin.post("/console/acme/agents/provider-key", {"provider": "local", "api_key": "sk-console-9"})
    assert stored.status_code == 302
    page = admin.get(stored["Location"]).content.decode()
    assert "stored" in page and "sk-console-9" not in page
    assert ProviderKey.objects.for_tenant(acme).filter(provider="local").exists()

    form = {
        "name": "triage",
        "provider": "local",
        "model": "gpt-test",
        "instructions": "Help.",
        "tools": "",
        "run_as": "caller",
        "service_roles": "",
        "max_steps": 5,
        "max_tool_calls": 5,
        "max_tokens": 5000,
        "max_seconds": 60,
    }
    created = admin.post("/console/acme/agents/create", form)
    assert created.status_code == 302 and created["Location"] == "/console/acme/agents/triage/"
    refused = admin.post("/console/acme/agents/create", {**form, "name": "Bad Name", "max_steps": 0})
    assert refused.status_code == 400
    assert "must match" in refused.content.decode() and "an integer from 1 to 100" in refused.content.decode()
    assert Agent.objects.for_tenant(acme).count() == 1


def test_members_see_agents_but_not_the_admin_forms(acme, signed_in, make_agent):
    make_agent(acme, name="helper")
    page = signed_in("reader").get("/console/acme/agents/").content.decode()
    assert "helper" in page and "Define an agent" not in page and "Store key" not in page
    assert signed_in("reader").post("/console/acme/agents/create", {}).status_code == 404


def test_a_member_chats_approves_a_held_call_and_reads_the_answer(cases_app, signed_in, make_agent):
    agent = make_agent(cases_app, name="closer")
    writer = signed_in("writer")
    sent = writer.post("/console/acme/agents/closer/", {"input": "Close the Globex case"})
    assert sent.status_code == 302
    run = AgentRun.objects.for_tenant(cases_app).get(agent=agent)
    assert sent["Location"] == f"/console/acme/agents/closer/runs/{run.run_id}"
    following = writer.get(sent["Location"]).content.decode()  # the page follows the run's events
    assert f'data-events="/api/tenants/acme/agents/closer/runs/{run.run_id}/events?after=-1"' in following
    assert '<script src="/console/_agent_run.js" defer></script>' in following and "<script>" not in following
    assert b"EventSource" in writer.get("/console/_agent_run.js").content

    model = script(call(CLOSE, client_name="Globex"), lambda m, i: _answer(tool_returns(m)))
    run_now(run, model)
    page = writer.get(sent["Location"]).content.decode()
    assert "awaiting_approval" in page and "Approve" in page and "Globex" in page

    decided = writer.post(f"{sent['Location']}/approvals/1", {"decision": "approve"})
    assert decided.status_code == 302
    run_now(run, model)
    page = writer.get(sent["Location"]).content.decode()
    assert "completed" in page and "Answer" in page and "confirmed" in page
    assert "and 1 tool call." in page
    assert signed_in("reader").get(sent["Location"]).status_code == 404  # not the reader's run


def test_a_run_page_shows_arguments_as_json(cases_app, signed_in, make_agent):
    make_agent(cases_app, name="finder")
    reader = signed_in("reader")
    sent = reader.post("/console/acme/agents/finder/", {"input": "find acme"})
    run_now(
        AgentRun.objects.for_tenant(cases_app).get(),
        script(call("acme_cases_find_case", query="acme"), "none"),
    )
    page = reader.get(sent["Location"]).content.decode()
    assert "<code>{&quot;query&quot;: &quot;acme&quot;}</code>" in page  # JSON, not a Python repr


def test_a_member_cancels_a_run_from_the_console(cases_app, signed_in, make_agent):
    make_agent(cases_app, name="helper")
    writer = signed_in("writer")
    sent = writer.post("/console/acme/agents/helper/", {"input": "hi"})
    cancelled = writer.post(f"{sent['Location']}/cancel")
    assert cancelled.status_code == 302
    assert AgentRun.objects.for_tenant(cases_app).get().status == "cancelled"


def _answer(lines):
    return ModelResponse(parts=[TextPart("Done: " + " | ".join(lines))])


def test_an_admin_edits_deletes_an_agent_and_forgets_a_key(acme, signed_in, make_agent):
    make_agent(acme, name="helper", max_steps=5)
    admin = signed_in("admin")
    page = admin.get("/console/acme/agents/helper/edit").content.decode()
    assert 'value="helper"' in page and "disabled" in page
    form = {
        "provider": "local",
        "model": "gpt-other",
        "instructions": "Be brief.",
        "tools": "",
        "run_as": "caller",
        "service_roles": "",
        "runners": "",
        "max_steps": 7,
        "max_tool_calls": 1,
        "max_tokens": 5000,
        "max_seconds": 60,
    }
    saved = admin.post("/console/acme/agents/helper/edit", form)
    assert saved.status_code == 302, saved.content.decode()
    agent = Agent.objects.for_tenant(acme).get(name="helper")
    assert (agent.model, agent.max_steps, agent.instructions) == ("gpt-other", 7, "Be brief.")
    assert "1 tool call," in admin.get("/console/acme/agents/").content.decode()
    refused = admin.post("/console/acme/agents/helper/edit", {**form, "max_steps": 0})
    assert refused.status_code == 400 and Agent.objects.for_tenant(acme).get().max_steps == 7
    assert signed_in("reader").get("/console/acme/agents/helper/edit").status_code == 404
    assert signed_in("reader").post("/console/acme/agents/helper/delete").status_code == 404

    admin.post("/console/acme/agents/provider-key", {"provider": "local", "api_key": "sk-1"})
    assert "Forget key" in admin.get("/console/acme/agents/").content.decode()
    assert admin.post("/console/acme/agents/provider-key/forget", {"provider": "local"}).status_code == 302
    assert not ProviderKey.objects.for_tenant(acme).exists()

    assert admin.post("/console/acme/agents/helper/delete").status_code == 302
    assert not Agent.objects.for_tenant(acme).exists()
