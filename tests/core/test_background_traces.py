"""Background work continues the trace that sent it (agent runs, MCP task runs, job runs alike)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import tracing
from core.background import Dispatcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    yield exporter
    tracing.disable()


def test_work_sent_inside_a_span_runs_in_a_child_span_of_it(spans, django_capture_on_commit_callbacks):
    traces: list[str] = []
    work = Dispatcher(
        "traced-work",
        task_name="tests.never_sent",
        tenant_of=lambda one: "acme",
        run=lambda one: traces.append(tracing.current_trace_id()),
        workers_setting="TASK_IN_PROCESS_WORKERS",
        share_setting="TASK_TENANT_SHARE",
    )
    with django_capture_on_commit_callbacks(execute=True):
        with tracing.span("request") as request:
            work.send_on_commit(["run_1"])
    assert work.in_process_pool().wait_idle(30)
    sent = next(s for s in spans.get_finished_spans() if s.name == "traced-work")
    assert sent.parent.span_id == request.get_span_context().span_id
    assert traces == [f"{request.get_span_context().trace_id:032x}"]
    assert dict(sent.attributes) == {"lcp.work.id": "run_1"}
