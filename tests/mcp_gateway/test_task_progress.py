"""Handler progress as a task's status message: the handler's numbers and words, written throttled."""

from __future__ import annotations

import pytest

from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.progress import TaskStatusEvents, status_text
from mcp_gateway.models import ToolTask
from tenants.callers import caller_for_token


@pytest.mark.parametrize(
    ("done", "total", "message", "text"),
    [
        (3, 12, "Rendering page 3", "3/12: Rendering page 3"),
        (0.5, None, None, "0.5"),
        (40, 100, None, "40/100"),
    ],
)
def test_the_status_text_shows_the_handlers_numbers_and_words(done, total, message, text):
    assert status_text(done, total, message) == text


def test_progress_is_written_at_most_once_a_second_while_the_task_works(acme, make_token):
    caller = caller_for_token(acme, make_token(acme, "reader")[1])
    task = task_store.create(acme, caller, "acme_reports_slow_report", {}, ttl_ms=None)
    now = [100.0]
    events = TaskStatusEvents(task, clock=lambda: now[0])

    def message() -> str:
        return ToolTask.all_tenants.get(pk=task.pk).status_message

    events.progress(1, 10, "first")
    events.progress(2, 10, "too soon")
    assert message() == "1/10: first"
    now[0] += 1.0
    events.progress(3, 10, "a second later")
    assert message() == "3/10: a second later"
    task_store.finish(task, {"content": []}, 15, failed=False)
    now[0] += 5
    events.progress(4, 10, "after the end")
    assert message() == ""
