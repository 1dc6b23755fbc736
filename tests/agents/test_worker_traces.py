"""An agent run on a real Celery worker continues the trace of the request that started it: the
worker (OTEL_EXPORTER_OTLP_ENDPOINT set) exports its spans to this test's loopback receiver."""

from __future__ import annotations

import json
import threading
import uuid

import pytest
from opentelemetry.instrumentation.celery import CeleryInstrumentor
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from core import tracing
from lowcode_platform.tracing import instrument_libraries
from tests.agents.test_e2e_providers import wait_for_end
from tests.apps_runtime.conftest import Worker, forget_queue, restore_broker, use_broker
from tests.mcp_gateway.test_otlp_export import Receiver, spans_of
from tests.support.apps import cases_manifest
from tests.support.chat_completions import answer_turn, scripted_provider, tool_call_turn

pytestmark = pytest.mark.slow
FIND = "acme_cases_find_case"


@pytest.mark.django_db(transaction=True)
def test_a_run_on_the_worker_is_in_the_trace_of_the_request_that_started_it(
    settings, monkeypatch, tmp_path, acme, deploy, make_token, api_client
):
    deploy(acme, cases_manifest())
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.server_address[1]}")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    instrument_libraries(provider)
    with scripted_provider(
        tool_call_turn((FIND, {"query": "worker"})), answer_turn(lambda results: "on the worker")
    ) as model:
        providers = {"compatible": {"kind": "openai", "base_url": model.base_url}}
        settings.AGENT_PROVIDERS = providers
        monkeypatch.setenv("AGENT_PROVIDERS", json.dumps(providers))
        queue = f"agents-traces-{uuid.uuid4().hex[:12]}"
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
            request = next(
                s
                for s in exporter.get_finished_spans()
                if s.kind == SpanKind.SERVER and s.name.startswith("POST") and s.name.endswith("/runs")
            )
            trace_id = request.context.trace_id
            assert run["status"] == "completed"
            found = threading.Event()

            def handler_in_trace() -> bool:
                names = {
                    s.name
                    for s in spans_of(receiver.requests)
                    if int.from_bytes(s.trace_id, "big") == trace_id
                }
                return {"handler cases", "run/agents.execute_run"} <= names

            for _ in range(600):  # bounded: the worker's batch goes out within its schedule delay
                if handler_in_trace():
                    found.set()
                    break
                found.wait(0.1)
        finally:
            log = worker.log_tail()
            worker.stop()
            restore_broker(old)
            forget_queue(queue)
            DjangoInstrumentor().uninstrument()
            CeleryInstrumentor().uninstrument()
            tracing.disable()
            receiver.shutdown()
    received = sorted(
        {(s.name, s.trace_id.hex(), s.parent_span_id.hex()) for s in spans_of(receiver.requests)}
    )
    assert found.is_set(), (f"{trace_id:032x}", received, log[-2000:])
    worker_spans = [s for s in spans_of(receiver.requests) if int.from_bytes(s.trace_id, "big") == trace_id]
    names = {s.name for s in worker_spans}
    assert "run/agents.execute_run" in names and any(n.startswith("chat") for n in names), names
