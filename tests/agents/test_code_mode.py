"""A tenant agent's run_code: offered with the caller's tools, and a confirm tool inside the script
waits for the same approval as a direct call."""

from __future__ import annotations

from pydantic_ai.messages import ModelResponse, TextPart

from agents.models import AgentRun
from agents.runs import start_run
from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from tests.agents.conftest import call, run_now, script, tool_returns
from tests.agents.test_runs import user

RUN = "acme_run_code"
CLOSE = "acme_cases_close_case"
SCRIPT = f"""
found = tools.call("acme_collections_list")
result = tools.call("{CLOSE}", {{"client_name": "Held"}})
"""


def _say(lines):
    return ModelResponse(parts=[TextPart(" | ".join(lines))])


def test_an_agents_script_with_a_confirm_tool_pauses_and_runs_only_once_approved(
    cases_app, make_agent, api_client
):
    agent = make_agent(cases_app)
    model = script(call(RUN, code=SCRIPT), lambda m, i: _say(tool_returns(m)))
    run = run_now(start_run(cases_app, agent, user("writer"), "close it"), model)

    assert RUN in {t.name for t in model.seen[0].function_tools}
    assert run.status == AgentRun.Status.AWAITING_APPROVAL
    assert not Record.objects.for_tenant(cases_app).exists()  # nothing ran before the decision
    held = run.steps.get(approval="pending")
    assert held.wire_name == RUN and "Held" in held.text

    api_client.force_authenticate(user("writer"))
    url = f"/api/tenants/acme/agents/{agent.name}/runs/{run.run_id}/approvals/{held.index}"
    assert api_client.post(url, {"approve": True}, format="json").status_code == 200
    run = run_now(run, model)

    assert run.status == AgentRun.Status.COMPLETED
    assert Record.objects.for_tenant(cases_app).get().data["client_name"] == "Held"
    parent = ToolCallAudit.objects.for_tenant(cases_app).get(wire_name=RUN, outcome="ok")
    inner = ToolCallAudit.objects.for_tenant(cases_app).filter(wire_name=CLOSE)
    assert [(r.outcome, r.parent_call_id, r.agent_run_id) for r in inner] == [
        ("confirmed", parent.call_id, run.run_id)
    ]
