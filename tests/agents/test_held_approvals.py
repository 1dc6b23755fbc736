"""An agent run's held call is an approval like any client's: listed, decided through the
approvals API (or the run's own endpoint, which marks the same row), with the tool's policy."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from pydantic_ai.messages import ModelResponse, TextPart

from agents.models import AgentRun
from agents.runs import start_run
from apps_runtime.models import Record
from mcp_gateway.models import Approval
from tests.agents.conftest import call, run_now, script, tool_returns

CLOSE = "acme_cases_close_case"


def _say(lines) -> ModelResponse:
    return ModelResponse(parts=[TextPart(" | ".join(lines))])


def user(name: str):
    return get_user_model().objects.get(username=name)


def held_run(cases_app, make_agent):
    agent = make_agent(cases_app)
    model = script(call(CLOSE, client_name="Held"), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)
    assert run.status == AgentRun.Status.AWAITING_APPROVAL
    return agent, run, model


def test_a_held_call_is_decided_through_the_approvals_api(cases_app, make_agent, api_client):
    agent, run, model = held_run(cases_app, make_agent)
    held = run.steps.get(approval="pending")
    approval = Approval.all_tenants.get(agent_run_id=run.run_id)
    assert (approval.agent_step, approval.wire_name, approval.status) == (held.index, CLOSE, "pending")

    api_client.force_authenticate(user("writer"))
    listed = api_client.get("/api/tenants/acme/approvals").json()
    assert [(row["id"], row["agentRunId"]) for row in listed] == [(approval.public_id, run.run_id)]
    answered = api_client.post(
        f"/api/tenants/acme/approvals/{approval.public_id}", {"approve": True}, format="json"
    )

    assert answered.status_code == 200 and answered.json()["status"] == "approved"
    run = run_now(run, model)
    assert run.status == AgentRun.Status.COMPLETED
    assert Record.objects.for_tenant(cases_app).get().data["client_name"] == "Held"
    again = api_client.post(
        f"/api/tenants/acme/approvals/{approval.public_id}", {"approve": False}, format="json"
    )
    assert again.status_code == 409


def test_the_runs_own_endpoint_marks_the_same_approval(cases_app, make_agent, api_client):
    agent, run, model = held_run(cases_app, make_agent)
    held = run.steps.get(approval="pending")

    api_client.force_authenticate(user("admin"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert api_client.post(url, {"approve": False}, format="json").status_code == 200

    approval = Approval.all_tenants.get(agent_run_id=run.run_id)
    assert (approval.status, approval.decided_by.username) == ("denied", "admin")


def test_another_member_cannot_see_an_agents_held_call(cases_app, make_agent, api_client):
    _, run, _ = held_run(cases_app, make_agent)
    approval = Approval.all_tenants.get(agent_run_id=run.run_id)

    api_client.force_authenticate(user("reader"))

    assert api_client.get(f"/api/tenants/acme/approvals/{approval.public_id}").status_code == 404
    decided = api_client.post(
        f"/api/tenants/acme/approvals/{approval.public_id}", {"approve": True}, format="json"
    )
    assert decided.status_code == 404
