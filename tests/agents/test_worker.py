"""An agent run on a real Celery worker over Redis (the production shape), not in the server."""

from __future__ import annotations

import json
import uuid

import pytest

from mcp_gateway.models import ToolCallAudit
from tests.agents.test_e2e_providers import wait_for_end
from tests.apps_runtime.conftest import Worker, forget_queue, restore_broker, use_broker
from tests.support.apps import cases_manifest
from tests.support.chat_completions import answer_turn, scripted_provider, tool_call_turn

pytestmark = pytest.mark.slow
FIND = "acme_cases_find_case"


@pytest.mark.django_db(transaction=True)
def test_a_run_executes_on_the_worker_and_the_api_answers_its_result(
    settings, monkeypatch, tmp_path, acme, deploy, make_token, api_client
):
    deploy(acme, cases_manifest())
    with scripted_provider(
        tool_call_turn((FIND, {"query": "worker"})), answer_turn(lambda results: "on the worker")
    ) as provider:
        providers = {"compatible": {"kind": "openai", "base_url": provider.base_url}}
        settings.AGENT_PROVIDERS = providers
        monkeypatch.setenv("AGENT_PROVIDERS", json.dumps(providers))  # the worker reads its own settings
        queue = f"agents-test-{uuid.uuid4().hex[:12]}"
        worker = Worker(queue, tmp_path)
        old = use_broker(eager=False, queue=queue)
        worker.start()
        try:
            _, admin = make_token(acme, "admin")
            api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {admin}")
            api_client.put(
                "/api/tenants/acme/agent-providers/compatible/key", {"api_key": "k"}, format="json"
            )
            api_client.post(
                "/api/tenants/acme/agents",
                {"name": "w", "provider": "compatible", "model": "m"},
                format="json",
            )
            _, reader = make_token(acme, "reader")
            api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {reader}")
            started = api_client.post("/api/tenants/acme/agents/w/runs", {"input": "go"}, format="json")
            run = wait_for_end(api_client, f"/api/tenants/acme/agents/w/runs/{started.json()['id']}", 120)
        finally:
            log = worker.log_tail()
            worker.stop()
            restore_broker(old)
            forget_queue(queue)

    assert run["status"] == "completed" and run["output"] == "on the worker", (run, log)
    assert "agents.execute_run" in log
    row = ToolCallAudit.objects.for_tenant(acme).get()
    assert (row.wire_name, row.outcome, row.user.username, row.agent_run_id) == (
        FIND,
        "ok",
        "reader",
        run["id"],
    )
