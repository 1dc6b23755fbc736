"""The agents API: definitions and provider keys for tenant admins, runs and their events for members."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.utils import timezone

from agents.keys import decrypt_key
from agents.models import AgentRun, ProviderKey
from agents.runs import start_run, sweep
from tenants.models import TenantAuditLog
from tests.agents.conftest import call, run_now, script

User = get_user_model()
AGENTS = "/api/tenants/acme/agents"


def read_stream(response) -> str:
    """The whole event stream; its database reads run in this thread, as the server's would in its own."""

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    return async_to_sync(collect)().decode()


@pytest.fixture
def as_user(api_client):
    def sign_in(name: str):
        api_client.force_authenticate(User.objects.get(username=name))
        return api_client

    return sign_in


def test_an_admin_defines_an_agent_and_members_read_it(acme, as_user):
    body = {
        "name": "triage",
        "instructions": "Sort new cases.",
        "provider": "local",
        "model": "gpt-4.1-mini",
        "tools": ["app:cases", "acme_records_query"],
        "max_steps": 5,
        "run_as": "service",
        "service_roles": ["case_reader"],
    }
    created = as_user("admin").post(AGENTS, body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["max_tool_calls"] == 20  # defaults fill in
    listed = as_user("reader").get(AGENTS)
    assert [a["name"] for a in listed.json()] == ["triage"]
    assert as_user("reader").post(AGENTS, {**body, "name": "other"}, format="json").status_code == 403
    changed = as_user("admin").patch(f"{AGENTS}/triage", {"max_steps": 8}, format="json")
    assert changed.json()["max_steps"] == 8
    assert TenantAuditLog.objects.for_tenant(acme).filter(action__startswith="agent.").count() == 2


def test_a_bad_definition_lists_every_problem(acme, as_user):
    answer = as_user("admin").post(
        AGENTS,
        {
            "name": "Bad Name",
            "provider": "elsewhere",
            "model": "m",
            "base_url": "http://169.254.169.254/",
            "max_steps": 0,
            "tools": ["app:Nope!"],
            "run_as": "root",
        },
        format="json",
    )
    assert answer.status_code == 422
    fields = {p["field"] for p in answer.json()["problems"]}
    assert fields == {"name", "provider", "base_url", "max_steps", "tools[0]", "run_as"}
    assert answer.json()["code"] == "invalid_agent"


def test_a_provider_key_is_stored_encrypted_and_never_shown(acme, as_user):
    client = as_user("admin")
    assert (
        client.put(
            "/api/tenants/acme/agent-providers/local/key", {"api_key": "sk-secret-1"}, format="json"
        ).status_code
        == 204
    )
    stored = ProviderKey.objects.for_tenant(acme).get()
    assert "sk-secret-1" not in stored.encrypted_key
    assert decrypt_key(stored.encrypted_key, "local") == "sk-secret-1"
    listed = client.get("/api/tenants/acme/agent-providers").json()
    assert listed == [
        {
            "name": "local",
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "key_stored": True,
            "key_updated_at": listed[0]["key_updated_at"],
        }
    ]
    assert "sk-secret-1" not in str(TenantAuditLog.objects.for_tenant(acme).values())
    assert (
        as_user("writer")
        .put("/api/tenants/acme/agent-providers/local/key", {"api_key": "sk-mine"}, format="json")
        .status_code
        == 403
    )
    unknown = as_user("admin").put(
        "/api/tenants/acme/agent-providers/evil/key", {"api_key": "k"}, format="json"
    )
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_provider"


def test_a_run_needs_a_stored_key(acme, as_user, make_agent):
    agent = make_agent(acme)
    answer = as_user("reader").post(f"{AGENTS}/{agent.name}/runs", {"input": "hi"}, format="json")
    assert answer.status_code == 409 and answer.json()["code"] == "provider_key_missing"


def test_the_events_stream_sends_each_step_and_the_end(cases_app, make_agent, as_user):
    agent = make_agent(cases_app)
    run = start_run(cases_app, agent, User.objects.get(username="reader"), "find")
    run_now(run, script(call("acme_cases_find_case", query="acme"), "none found"))
    response = as_user("reader").get(f"{AGENTS}/{agent.name}/runs/{run.run_id}/events")
    assert response["Content-Type"] == "text/event-stream"
    text = read_stream(response)
    events = [block.split("\n")[0] for block in text.strip().split("\n\n")]
    assert events == ["event: step", "event: step", "event: step", "event: status"]
    assert '"status":"completed"' in text and '"output":"none found"' in text
    later = as_user("reader").get(f"{AGENTS}/{agent.name}/runs/{run.run_id}/events?after=1")
    assert read_stream(later).count("event: step") == 1


def test_the_events_stream_answers_what_an_event_source_accepts(cases_app, make_agent, as_user):
    """A browser's EventSource sends ``Accept: text/event-stream``: the stream, not a 406."""
    agent = make_agent(cases_app)
    run = start_run(cases_app, agent, User.objects.get(username="reader"), "find")
    run_now(run, script("none found"))
    url = f"{AGENTS}/{agent.name}/runs/{run.run_id}/events"
    response = as_user("reader").get(url, HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    assert '"status":"completed"' in read_stream(response)
    missing = as_user("reader").get(
        f"{AGENTS}/{agent.name}/runs/run_nope/events", HTTP_ACCEPT="text/event-stream"
    )
    assert missing.status_code == 404 and b"not" in missing.content.lower()


def test_a_run_lost_with_its_process_fails_instead_of_running_forever(cases_app, make_agent, as_user):
    agent = make_agent(cases_app)
    run = start_run(cases_app, agent, User.objects.get(username="reader"), "hi")
    AgentRun.objects.for_tenant(cases_app).filter(pk=run.pk).update(
        status="running", deadline=timezone.now() - timedelta(seconds=1)
    )
    body = as_user("reader").get(f"{AGENTS}/{agent.name}/runs/{run.run_id}").json()
    assert body["status"] == "failed" and "lost" in body["reason"]

    other = start_run(cases_app, agent, User.objects.get(username="reader"), "again")
    AgentRun.objects.for_tenant(cases_app).filter(pk=other.pk).update(
        status="running", deadline=timezone.now() - timedelta(seconds=1)
    )
    assert sweep()["lost"] == 1
    other.refresh_from_db()
    assert other.status == "failed"
