"""Agent runs scripted with pydantic-ai's FunctionModel: every tool call is the member's own MCP call."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from agents.definitions import set_provider_key
from agents.exceptions import BudgetExhausted
from agents.execution import execute_run
from agents.models import AgentRun, AgentRunStep
from agents.runs import start_run
from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call.calls import list_tools
from tenants import actions
from tenants.callers import caller_for
from tests.agents.conftest import call, run_now, script, tool_returns

User = get_user_model()
Status = AgentRun.Status
FIND = "acme_cases_find_case"
CREATE = "acme_cases_create_case"
CLOSE = "acme_cases_close_case"


def user(name: str):
    return User.objects.get(username=name)


def test_the_tools_offered_are_the_callers_tools_list(cases_app, make_agent):
    agent = make_agent(cases_app)
    model = script("done")
    run = run_now(start_run(cases_app, agent, user("reader"), "hello"), model)

    mcp_list = list_tools(cases_app, caller_for(cases_app, user("reader")), None).tools
    offered = model.seen[0].function_tools
    assert [t.name for t in offered] == [t.name for t in mcp_list]
    assert [t.description for t in offered] == [t.description for t in mcp_list]
    assert [t.parameters_json_schema for t in offered] == [t.input_schema for t in mcp_list]
    assert CREATE not in {t.name for t in offered}  # a reader's list has no writing tool
    assert run.status == Status.COMPLETED and run.output == "done"


def test_a_script_calling_a_tool_the_caller_may_not_see_is_refused_and_audited(cases_app, make_agent):
    agent = make_agent(cases_app)
    model = script(call(CREATE, client_name="Sneaky"), lambda messages, info: _say(tool_returns(messages)))
    run = run_now(start_run(cases_app, agent, user("reader"), "create one"), model)

    assert run.status == Status.COMPLETED
    assert "Unknown tool name" in run.output  # what the framework told the model: nothing ran
    assert not Record.objects.for_tenant(cases_app).exists()
    audit = ToolCallAudit.objects.for_tenant(cases_app).get()
    assert (audit.wire_name, audit.outcome) == (CREATE, "denied")
    assert (audit.agent_name, audit.agent_run_id, audit.user.username) == (agent.name, run.run_id, "reader")
    step = run.steps.get(kind=AgentRunStep.Kind.TOOL)
    assert (step.wire_name, step.outcome) == (CREATE, "denied")


def _say(lines):
    return ModelResponse(parts=[TextPart(" | ".join(lines))])


def test_tool_calls_run_as_the_member_with_the_same_audit_as_mcp(cases_app, make_agent):
    agent = make_agent(cases_app)
    model = script(
        call(CREATE, client_name="Acme Ltd"), call(FIND, query="acme"), lambda m, i: _say(tool_returns(m))
    )
    run = run_now(start_run(cases_app, agent, user("writer"), "make and find"), model)

    assert run.status == Status.COMPLETED
    assert "Acme Ltd" in run.output
    record = Record.objects.for_tenant(cases_app).get()
    assert record.created_by == "writer"
    rows = list(
        ToolCallAudit.objects.for_tenant(cases_app)
        .order_by("created_at")
        .values_list("wire_name", "outcome", "user__username", "agent_name", "agent_run_id")
    )
    assert rows == [
        (CREATE, "ok", "writer", agent.name, run.run_id),
        (FIND, "ok", "writer", agent.name, run.run_id),
    ]
    tools = [(s.wire_name, s.outcome) for s in run.steps.filter(kind="tool").order_by("index")]
    assert tools == [(CREATE, "ok"), (FIND, "ok")]
    assert run.usage["tool_calls"] == 2 and run.total_tokens > 0


def test_a_service_member_agent_acts_with_its_own_roles_not_the_starters(cases_app, make_agent):
    as_caller = make_agent(cases_app)
    service = make_agent(cases_app, run_as="service", service_roles=["case_writer"], runners="user")

    seen_as_caller = script("ok")
    run_now(start_run(cases_app, as_caller, user("member"), "hi"), seen_as_caller)
    assert CREATE not in {t.name for t in seen_as_caller.seen[0].function_tools}

    model = script(call(CREATE, client_name="By service"), "created")
    run = run_now(start_run(cases_app, service, user("member"), "create"), model)
    assert run.status == Status.COMPLETED
    audit = ToolCallAudit.objects.for_tenant(cases_app).get(wire_name=CREATE)
    assert audit.outcome == "ok" and audit.user is None and audit.agent_name == service.name
    assert Record.objects.for_tenant(cases_app).get().data["client_name"] == "By service"


def test_app_tools_switched_off_leave_the_agent_the_built_ins_only(cases_app, make_agent):
    actions.set_tenant_setting(cases_app, "customAppsMcpTools", False, acting_user=None)
    agent = make_agent(cases_app)
    model = script(call(FIND, query="acme"), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "find"), model)

    names = {t.name for t in model.seen[0].function_tools}
    assert names and all(not name.startswith("acme_cases_") for name in names)
    assert "acme_records_query" in names
    assert ToolCallAudit.objects.for_tenant(cases_app).get().outcome == "denied"
    assert run.status == Status.COMPLETED


def test_in_search_mode_the_agent_is_offered_the_list_then_what_search_tools_finds(cases_app, make_agent):
    actions.set_tenant_setting(cases_app, "toolDiscovery", "search", acting_user=None)
    agent = make_agent(cases_app)
    model = script(
        call("acme_search_tools", query="find a case by client name", limit=5),
        call(FIND, query="acme"),
        lambda m, i: _say(tool_returns(m)),
    )
    run = run_now(start_run(cases_app, agent, user("reader"), "find acme"), model)

    listed = {t.name for t in list_tools(cases_app, caller_for(cases_app, user("reader")), None).tools}
    assert {t.name for t in model.seen[0].function_tools} == listed and FIND not in listed
    assert FIND in {t.name for t in model.seen[1].function_tools}  # found, so offered from then on
    assert run.status == Status.COMPLETED
    outcomes = list(
        ToolCallAudit.objects.for_tenant(cases_app).order_by("created_at").values_list("wire_name", "outcome")
    )
    assert outcomes == [("acme_search_tools", "ok"), (FIND, "ok")]


def test_selectors_narrow_the_tools_to_an_app_or_named_tools(cases_app, make_agent):
    agent = make_agent(cases_app, tools=[FIND, "acme_records_query"])
    model = script("ok")
    run_now(start_run(cases_app, agent, user("writer"), "hi"), model)
    assert {t.name for t in model.seen[0].function_tools} == {FIND, "acme_records_query"}

    by_app = make_agent(cases_app, tools=["app:cases"])
    model = script("ok")
    run_now(start_run(cases_app, by_app, user("writer"), "hi"), model)
    assert {t.name for t in model.seen[0].function_tools} == {
        t.name
        for t in list_tools(cases_app, caller_for(cases_app, user("writer")), None).tools
        if t.name.startswith("acme_cases_")
    }


def test_a_confirm_tool_pauses_the_run_and_runs_only_once_approved(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    model = script(call(CLOSE, client_name="Held"), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)

    assert run.status == Status.AWAITING_APPROVAL
    assert not Record.objects.for_tenant(cases_app).exists()  # nothing ran before the decision
    assert not ToolCallAudit.objects.for_tenant(cases_app).exists()
    held = run.steps.get(approval="pending")
    assert held.wire_name == CLOSE and "Held" in held.text

    api_client.force_authenticate(user("writer"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    answered = api_client.post(url, {"approve": True}, format="json")
    assert answered.status_code == 200 and answered.json()["status"] == "queued"

    run = run_now(run, model)
    assert run.status == Status.COMPLETED
    assert Record.objects.for_tenant(cases_app).get().data["client_name"] == "Held"
    rows = list(
        ToolCallAudit.objects.for_tenant(cases_app).values_list("wire_name", "outcome", "agent_run_id")
    )
    assert rows == [(CLOSE, "confirmed", run.run_id)], rows
    held.refresh_from_db()
    assert (held.approval, held.outcome, held.decided_by.username) == ("approved", "confirmed", "writer")


def test_a_denied_call_never_runs_and_the_model_is_told(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    model = script(call(CLOSE, client_name="Nope"), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)
    held = run.steps.get(approval="pending")

    api_client.force_authenticate(user("admin"))  # a tenant admin may decide too
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert api_client.post(url, {"approve": False}, format="json").status_code == 200
    run = run_now(run, model)

    assert run.status == Status.COMPLETED and "denied" in run.output
    assert not Record.objects.for_tenant(cases_app).exists()
    assert ToolCallAudit.objects.for_tenant(cases_app).get().outcome == "declined"
    again = api_client.post(url, {"approve": True}, format="json")
    assert again.status_code == 409


def test_another_member_cannot_see_or_decide_someone_elses_run(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    run = run_now(start_run(cases_app, agent, user("writer"), "close"), script(call(CLOSE, client_name="x")))
    held = run.steps.get(approval="pending")
    api_client.force_authenticate(user("reader"))
    base = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}"
    assert api_client.get(base).status_code == 404
    assert (
        api_client.post(f"{base}/approvals/{held.index}", {"approve": True}, format="json").status_code == 404
    )
    assert api_client.post(f"{base}/cancel").status_code == 404


@pytest.mark.parametrize(
    ("limits", "said"),
    [
        ({"max_steps": 2}, "Step limit reached"),
        ({"max_tool_calls": 1}, "Tool call limit reached"),
        ({"max_tokens": 100}, "Token limit reached"),
    ],
)
def test_limits_end_the_run_with_a_clear_reason(cases_app, make_agent, limits, said):
    agent = make_agent(cases_app, **limits)
    model = script(lambda m, i: call(FIND, query="acme " + "x" * 200))  # never stops calling
    run = run_now(start_run(cases_app, agent, user("reader"), "loop"), model)
    assert run.status == Status.FAILED
    assert said in run.reason


def test_the_tenants_daily_budgets_refuse_new_runs(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    actions.set_tenant_setting(cases_app, "agentRunsPerDay", 1, acting_user=None)
    api_client.force_authenticate(user("reader"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs"
    assert api_client.post(url, {"input": "one"}, format="json").status_code == 202
    refused = api_client.post(url, {"input": "two"}, format="json")
    assert refused.status_code == 429
    assert (
        refused.json()["code"] == "agent_budget_exhausted" and "agentRunsPerDay" in refused.json()["detail"]
    )


def test_a_spent_token_budget_refuses_and_caps_a_running_run(cases_app, make_agent):
    agent = make_agent(cases_app)
    first = run_now(start_run(cases_app, agent, user("reader"), "hi"), script("hello"))
    actions.set_tenant_setting(cases_app, "agentTokensPerDay", first.total_tokens + 60, acting_user=None)
    run = run_now(
        start_run(cases_app, agent, user("reader"), "loop"),
        script(lambda m, i: call(FIND, query="acme " + "x" * 200)),
    )
    assert run.status == Status.FAILED and "agentTokensPerDay" in run.reason
    with pytest.raises(BudgetExhausted):
        start_run(cases_app, agent, user("reader"), "more")


def test_cancelling_a_queued_run_ends_it_before_it_starts(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    run = start_run(cases_app, agent, user("reader"), "hi")
    api_client.force_authenticate(user("reader"))
    answer = api_client.post(f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/cancel")
    assert answer.status_code == 202 and answer.json()["status"] == "cancelled"
    model = script("never")
    run = run_now(run, model)
    assert run.status == Status.CANCELLED and model.seen == []


def test_cancelling_a_running_run_stops_it_at_once(cases_app, make_agent):
    agent = make_agent(cases_app)

    async def slow_turn(messages, info):
        await sync_to_async(AgentRun.all_tenants.filter(agent=agent).update)(cancel_requested=True)
        await asyncio.sleep(30)  # the cancel interrupts this wait
        return _say(["too late"])

    run = run_now(start_run(cases_app, agent, user("reader"), "hi"), FunctionModel(slow_turn))
    assert run.status == Status.CANCELLED and run.output == ""


def test_a_provider_error_ends_the_run_with_its_reason(cases_app, make_agent):
    def failing(messages, info):
        raise ModelHTTPError(status_code=401, model_name="scripted", body={"error": "bad key sk-test-key"})

    agent = make_agent(cases_app)
    run = run_now(start_run(cases_app, agent, user("reader"), "hi"), script(failing))
    assert run.status == Status.FAILED
    assert run.reason == "The model provider answered HTTP 401 (model scripted)."


def test_a_held_run_whose_starter_left_is_denied_or_ends_with_a_clear_reason(
    cases_app, make_agent, api_client
):
    agent = make_agent(cases_app)
    model = script(call(CLOSE, client_name="Gone"), "never")
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)
    held = run.steps.get(approval="pending")
    actions.remove_member(cases_app, "writer", acting_user=None)

    api_client.force_authenticate(user("admin"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert api_client.post(url, {"approve": True}, format="json").status_code == 200
    run = run_now(run, model)
    assert run.status == Status.FAILED and "no longer an active member" in run.reason
    assert not Record.objects.for_tenant(cases_app).exists()


def test_a_role_taken_away_during_a_pause_applies_to_the_resumed_call(cases_app, make_agent, api_client):
    agent = make_agent(cases_app)
    model = script(call(CLOSE, client_name="Late"), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)
    held = run.steps.get(approval="pending")
    actions.update_member(cases_app, "writer", roles=["case_reader"], acting_user=None)

    api_client.force_authenticate(user("writer"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert api_client.post(url, {"approve": True}, format="json").status_code == 200
    run = run_now(run, model)
    assert run.status == Status.COMPLETED and "Unknown tool name" in run.output  # the model is told
    assert not Record.objects.for_tenant(cases_app).exists()
    assert ToolCallAudit.objects.for_tenant(cases_app).get().outcome == "denied"
    held.refresh_from_db()
    assert (held.approval, held.outcome) == ("approved", "denied")


def test_an_unreachable_provider_fails_the_run_naming_endpoint_cause_and_error_id(cases_app, make_agent):
    """Nothing listens on 127.0.0.1:9: the run fails saying where it went, why, and with an error id."""
    set_provider_key(cases_app, "local", "sk-unreachable", acting_user=None)
    agent = make_agent(cases_app)
    run = start_run(cases_app, agent, get_user_model().objects.get(username="reader"), "hi")
    execute_run(run.run_id)
    run.refresh_from_db()
    assert run.status == "failed" and run.error_id.startswith("err_")
    assert "http://127.0.0.1:9/v1 could not be reached" in run.reason
    assert f"(error id {run.error_id})" in run.reason and "(model " in run.reason
    assert "ConnectError: All connection attempts failed" in run.reason, run.reason  # the transport's words
