"""An agent run's model calls are GenAI spans with token usage, never the prompt or the output."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents.models import AgentRun
from core import tracing
from tests.agents.conftest import call, run_now, script
from tests.agents.test_runs import FIND, start_run, user

PROMPT = "zq-prompt-text-6610"
ARGUMENT = "zq-tool-argument-1187"


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    yield exporter
    tracing.disable()


def test_model_calls_are_genai_spans_with_usage_and_the_tool_calls_nest_under_the_run(
    cases_app, make_agent, spans
):
    agent = make_agent(cases_app)
    model = script(call(FIND, query=ARGUMENT), "zq-final-output")
    run = run_now(start_run(cases_app, agent, user("reader"), PROMPT), model)
    assert run.status == AgentRun.Status.COMPLETED
    finished = spans.get_finished_spans()
    chats = [s for s in finished if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 2
    assert all(s.attributes.get("gen_ai.usage.input_tokens", 0) > 0 for s in chats)
    assert all("gen_ai.usage.output_tokens" in s.attributes for s in chats)
    everything = " ".join(
        f"{s.name} {dict(s.attributes)} {[e.attributes for e in s.events]}" for s in finished
    )
    for secret in (PROMPT, ARGUMENT, "zq-final-output"):
        assert secret not in everything
    handler = next(s for s in finished if s.name == "handler cases")
    assert handler.context.trace_id == chats[0].context.trace_id  # one trace: the run's
