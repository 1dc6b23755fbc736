"""End to end: the real API starts a run; pydantic-ai's OpenAI client talks to a scripted
chat-completions server on loopback, whose tool calls go through the gateway as the member."""

from __future__ import annotations

import time

import pytest

from agents import definitions
from agents.models import AgentRun, ProviderKey
from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from tests.support.apps import cases_manifest
from tests.support.chat_completions import USAGE, answer_turn, scripted_provider, tool_call_turn

CREATE, FIND = "acme_cases_create_case", "acme_cases_find_case"
KEY = "sk-e2e-tenant-key"


def wait_for_end(client, url: str, seconds: float = 60) -> dict:
    """Poll the run until it leaves queued/running (bounded; the run itself has a 30 s wall time)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"the run did not end in {seconds} s: {body}")


@pytest.mark.django_db(transaction=True)
def test_a_run_through_the_api_calls_tools_as_the_member_and_answers(
    settings, acme, deploy, make_token, api_client
):
    deploy(acme, cases_manifest())
    with scripted_provider(
        tool_call_turn((CREATE, {"client_name": "Initech"})),
        tool_call_turn((FIND, {"query": "init"})),
        answer_turn(lambda results: "Found: " + results[-1]),
    ) as provider:
        settings.AGENT_PROVIDERS = {"compatible": {"kind": "openai", "base_url": provider.base_url}}
        _, admin_token = make_token(acme, "admin")
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_token}")
        assert (
            api_client.put(
                "/api/tenants/acme/agent-providers/compatible/key", {"api_key": KEY}, format="json"
            ).status_code
            == 204
        )
        created = api_client.post(
            "/api/tenants/acme/agents",
            {
                "name": "helper",
                "provider": "compatible",
                "model": "gpt-test",
                "max_seconds": 30,
                "instructions": "You help with cases.",
            },
            format="json",
        )
        assert created.status_code == 201, created.json()

        _, writer_token = make_token(acme, "writer")
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {writer_token}")
        started = api_client.post(
            "/api/tenants/acme/agents/helper/runs", {"input": "Open Initech"}, format="json"
        )
        assert started.status_code == 202 and started.json()["status"] == "queued"
        run = wait_for_end(api_client, f"/api/tenants/acme/agents/helper/runs/{started.json()['id']}")

    assert run["status"] == "completed", run
    assert run["output"].startswith("Found: ") and "Initech" in run["output"]
    tool_steps = [(s["wire_name"], s["outcome"]) for s in run["steps"] if s["kind"] == "tool"]
    assert tool_steps == [(CREATE, "ok"), (FIND, "ok")]
    assert run["usage"]["total_tokens"] == 3 * sum(USAGE) and run["usage"]["requests"] == 3
    assert Record.objects.for_tenant(acme).get().created_by == "writer"
    rows = ToolCallAudit.objects.for_tenant(acme).order_by("created_at")
    assert [(r.wire_name, r.outcome, r.user.username, r.agent_name, r.agent_run_id) for r in rows] == [
        (CREATE, "ok", "writer", "helper", run["id"]),
        (FIND, "ok", "writer", "helper", run["id"]),
    ]
    # The provider got the tenant's key, the agent's model and instructions, and the writer's tools.
    assert {h["authorization"] for h in provider.headers} == {f"Bearer {KEY}"}
    first = provider.requests[0]
    assert first["model"] == "gpt-test"
    assert any("You help with cases." in str(m.get("content")) for m in first["messages"])
    assert {CREATE, FIND} <= {t["function"]["name"] for t in first["tools"]}


@pytest.mark.django_db(transaction=True)
def test_a_provider_refusing_the_key_fails_the_run_without_showing_the_key(
    settings, acme, make_token, api_client
):
    with scripted_provider(tool_call_turn(("x", {}))) as provider:  # answers 404 on another path
        settings.AGENT_PROVIDERS = {
            "compatible": {"kind": "openai", "base_url": provider.base_url + "/wrong"}
        }
        definitions.set_provider_key(acme, "compatible", KEY, acting_user=None)
        definitions.create_agent(
            acme, {"name": "helper", "provider": "compatible", "model": "m"}, acting_user=None
        )
        _, token = make_token(acme, "reader")
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        started = api_client.post("/api/tenants/acme/agents/helper/runs", {"input": "hi"}, format="json")
        run = wait_for_end(api_client, f"/api/tenants/acme/agents/helper/runs/{started.json()['id']}")

    assert run["status"] == "failed"
    assert run["reason"] == "The model provider answered HTTP 404 (model m)."
    assert KEY not in str(run) and KEY not in ProviderKey.objects.for_tenant(acme).get().encrypted_key
    assert AgentRun.objects.for_tenant(acme).get().status == "failed"


@pytest.mark.django_db(transaction=True)
def test_an_anthropic_agent_runs_through_the_messages_api(settings, acme, deploy, make_token, api_client):
    deploy(acme, cases_manifest())
    with scripted_provider(
        tool_call_turn((FIND, {"query": "nobody"})),
        answer_turn(lambda results: f"Searched: {results[-1]}"),
        kind="anthropic",
    ) as provider:
        settings.AGENT_PROVIDERS = {"claude": {"kind": "anthropic", "base_url": provider.base_url}}
        definitions.set_provider_key(acme, "claude", "sk-ant-e2e", acting_user=None)
        definitions.create_agent(
            acme, {"name": "claude_helper", "provider": "claude", "model": "claude-test"}, acting_user=None
        )
        _, token = make_token(acme, "reader")
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        started = api_client.post(
            "/api/tenants/acme/agents/claude_helper/runs", {"input": "find"}, format="json"
        )
        run = wait_for_end(api_client, f"/api/tenants/acme/agents/claude_helper/runs/{started.json()['id']}")

    assert run["status"] == "completed", run
    assert run["output"].startswith("Searched: ")
    assert [(s["wire_name"], s["outcome"]) for s in run["steps"] if s["kind"] == "tool"] == [(FIND, "ok")]
    # The SDK sends the key as x-api-key or as a bearer token, depending on its version.
    sent = {
        h.get("x-api-key") or h.get("authorization", "").removeprefix("Bearer ") for h in provider.headers
    }
    assert sent == {"sk-ant-e2e"}
    assert provider.requests[0]["model"] == "claude-test"
    assert FIND in {tool["name"] for tool in provider.requests[0]["tools"]}
    row = ToolCallAudit.objects.for_tenant(acme).get()
    assert (row.user.username, row.agent_name, row.agent_run_id) == ("reader", "claude_helper", run["id"])
