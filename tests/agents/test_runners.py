"""Who may run an agent (its ``runners`` rule): checked at the start, when a run goes on, and per approval."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agents.models import AgentRun
from agents.runs import start_run
from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from tenants import actions
from tests.agents.conftest import call, run_now, script

User = get_user_model()
Status = AgentRun.Status
AGENTS = "/api/tenants/acme/agents"
CLOSE = "acme_cases_close_case"


def user(name: str):
    return User.objects.get(username=name)


@pytest.fixture
def as_user(api_client):
    def sign_in(name: str):
        api_client.force_authenticate(user(name))
        return api_client

    return sign_in


def _start(as_user, who: str, agent) -> object:
    return as_user(who).post(f"{AGENTS}/{agent.name}/runs", {"input": "go"}, format="json")


def test_a_member_without_roles_cannot_start_a_service_agent_by_default(cases_app, make_agent, as_user):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"])
    refused = _start(as_user, "member", agent)
    assert refused.status_code == 403, refused.json()
    body = refused.json()
    assert body["code"] == "permission_denied"
    assert "tenant admins only" in body["detail"] and "runners" in body["detail"]
    assert _start(as_user, "writer", agent).status_code == 403  # holding the service roles is not enough
    assert not AgentRun.objects.for_tenant(cases_app).exists()
    assert _start(as_user, "admin", agent).status_code == 202
    assert _start(as_user, "root", agent).status_code == 202  # a platform superuser


def test_an_agent_that_runs_as_the_caller_may_be_run_by_every_member_by_default(
    cases_app, make_agent, as_user
):
    agent = make_agent(cases_app)
    assert _start(as_user, "member", agent).status_code == 202


def test_the_rule_lets_exactly_the_members_it_names_run_the_agent(cases_app, make_agent, as_user):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="role:case_reader")
    assert _start(as_user, "reader", agent).status_code == 202
    assert _start(as_user, "member", agent).status_code == 403
    assert _start(as_user, "writer", agent).status_code == 403
    assert _start(as_user, "admin", agent).status_code == 202  # tenant admins always may


def test_the_rule_is_set_read_and_validated_through_the_api(cases_app, as_user):
    body = {"name": "triage", "provider": "local", "model": "m", "run_as": "service"}
    created = as_user("admin").post(AGENTS, body, format="json")
    assert created.status_code == 201 and created.json()["runners"] == ""  # the default
    for bad in ("public", "internal", "role:", "role:Case Reader", "admins", 5, "role:" + "a," * 2000 + "b"):
        answer = as_user("admin").patch(f"{AGENTS}/triage", {"runners": bad}, format="json")
        assert answer.status_code == 422, bad
        assert [p["field"] for p in answer.json()["problems"]] == ["runners"], answer.json()
    changed = as_user("admin").patch(f"{AGENTS}/triage", {"runners": "role:case_reader"}, format="json")
    assert changed.status_code == 200 and changed.json()["runners"] == "role:case_reader"
    assert as_user("reader").get(f"{AGENTS}/triage").json()["runners"] == "role:case_reader"
    reset = as_user("admin").patch(f"{AGENTS}/triage", {"runners": None}, format="json")
    assert reset.json()["runners"] == ""  # null is the default too
    assert as_user("reader").patch(f"{AGENTS}/triage", {"runners": "user"}, format="json").status_code == 403


def test_a_queued_run_whose_starter_was_removed_fails_when_it_goes_on(cases_app, make_agent):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="user")
    run = start_run(cases_app, agent, user("member"), "create a case")
    actions.remove_member(cases_app, "member", acting_user=None)
    model = script(call("acme_cases_create_case", client_name="Never"), "done")
    run = run_now(run, model)
    assert run.status == Status.FAILED
    assert run.reason == "the member who started the run is no longer an active member of the tenant"
    assert model.seen == [] and not Record.objects.for_tenant(cases_app).exists()


def test_a_queued_run_whose_starter_the_rule_now_leaves_out_fails_when_it_goes_on(cases_app, make_agent):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="user")
    run = start_run(cases_app, agent, user("member"), "create a case")
    agent.runners = ""  # back to the default: tenant admins only
    agent.save(update_fields=["runners"])
    model = script("never")
    run = run_now(run, model)
    assert run.status == Status.FAILED and model.seen == []
    assert f"may no longer run agent '{agent.name}'" in run.reason and "tenant admins only" in run.reason


def _held(cases_app, agent, starter: str):
    model = script(call(CLOSE, client_name="Held"), "done")
    run = run_now(start_run(cases_app, agent, user(starter), "close it"), model)
    assert run.status == Status.AWAITING_APPROVAL
    return run, run.steps.get(approval="pending"), model


def test_a_member_the_rule_leaves_out_cannot_approve_and_one_it_allows_can(cases_app, make_agent, as_user):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="role:case_writer")
    run, held, model = _held(cases_app, agent, "writer")
    url = f"{AGENTS}/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    actions.update_member(cases_app, "writer", roles=["case_reader"], acting_user=None)

    refused = as_user("writer").post(url, {"approve": True}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    assert "approve calls of" in refused.json()["detail"]
    assert as_user("reader").post(url, {"approve": True}, format="json").status_code == 404  # not theirs
    held.refresh_from_db()
    assert held.approval == "pending"

    actions.update_member(cases_app, "writer", roles=["case_writer"], acting_user=None)
    assert as_user("writer").post(url, {"approve": True}, format="json").status_code == 200
    run = run_now(run, model)
    assert run.status == Status.COMPLETED
    assert Record.objects.for_tenant(cases_app).get().data["client_name"] == "Held"


def test_a_member_the_rule_leaves_out_may_still_deny_a_held_call(cases_app, make_agent, as_user):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="user")
    run, held, model = _held(cases_app, agent, "member")
    agent.runners = ""
    agent.save(update_fields=["runners"])
    url = f"{AGENTS}/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert as_user("member").post(url, {"approve": True}, format="json").status_code == 403
    assert as_user("member").post(url, {"approve": False}, format="json").status_code == 200
    assert ToolCallAudit.objects.for_tenant(cases_app).get().outcome == "declined"


def test_a_held_service_run_approved_by_an_admin_fails_once_its_starter_is_left_out(
    cases_app, make_agent, as_user
):
    agent = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="user")
    run, held, model = _held(cases_app, agent, "member")
    as_user("admin").patch(f"{AGENTS}/{agent.name}", {"runners": "role:case_writer"}, format="json")
    url = f"{AGENTS}/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert as_user("admin").post(url, {"approve": True}, format="json").status_code == 200
    run = run_now(run, model)
    assert run.status == Status.FAILED and "may no longer run agent" in run.reason
    assert not Record.objects.for_tenant(cases_app).exists()  # the approved call never ran


def _console(username: str) -> Client:
    client = Client()
    client.force_login(user(username))
    return client


def test_the_console_shows_the_rule_and_refuses_a_member_it_leaves_out(cases_app, make_agent):
    make_agent(cases_app, name="closer", run_as="service", service_roles=["case_writer"])
    member = _console("member")
    page = member.get("/console/acme/agents/closer/").content.decode()
    assert "tenant admins only" in page and "You may not run this agent" in page
    assert 'name="input"' not in page
    sent = member.post("/console/acme/agents/closer/", {"input": "Close the Globex case"})
    assert sent.status_code == 403 and "may not run agent" in sent.content.decode()
    assert not AgentRun.objects.for_tenant(cases_app).exists()
    admin_page = _console("admin").get("/console/acme/agents/closer/").content.decode()
    assert 'name="input"' in admin_page


def test_the_console_agent_form_sets_and_validates_the_rule(cases_app):
    admin = _console("admin")
    form = {
        "name": "triage",
        "provider": "local",
        "model": "gpt-test",
        "run_as": "service",
        "service_roles": "case_reader",
        "max_steps": 10,
        "max_tool_calls": 20,
        "max_tokens": 50000,
        "max_seconds": 120,
    }
    refused = admin.post("/console/acme/agents/create", {**form, "runners": "public"})
    assert refused.status_code == 400 and "not allowed here" in refused.content.decode()
    created = admin.post("/console/acme/agents/create", {**form, "runners": "role:case_reader"})
    assert created.status_code == 302
    page = admin.get(created["Location"]).content.decode()
    assert "members with the role case_reader, and tenant admins" in page
    assert "<code>role:case_reader</code>" in page


def test_the_console_hides_approve_from_a_member_the_rule_leaves_out(cases_app, make_agent):
    agent = make_agent(
        cases_app, name="closer", run_as="service", service_roles=["case_writer"], runners="user"
    )
    run, held, model = _held(cases_app, agent, "member")
    page_url = f"/console/acme/agents/closer/runs/{run.run_id}"
    assert 'value="approve"' in _console("member").get(page_url).content.decode()
    agent.runners = ""
    agent.save(update_fields=["runners"])
    page = _console("member").get(page_url).content.decode()
    assert 'value="approve"' not in page and 'value="deny"' in page
    assert "for those who may run it (tenant admins only)" in page
    decided = _console("member").post(f"{page_url}/approvals/{held.index}", {"decision": "approve"})
    assert decided.status_code == 302
    held.refresh_from_db()
    assert held.approval == "pending"
