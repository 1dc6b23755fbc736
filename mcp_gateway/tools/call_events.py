"""Where the notices (progress, log lines) of the tool call being served go.

``run_route`` in the worker thread reads ``running_call_events``; the protocol layer's relay
(``protocol.progress_relay``) and a task run (``mcp_tasks.runs``) bind their receiver with
``bound_events``. It lives here, below both, so neither the tool core nor the tasks import the
protocol layer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from apps_runtime.call_events import CallEvents

# The events of the tool call being served, for ``run_route`` in the worker thread (``in_thread``
# carries context variables along).
running_call_events: ContextVar[CallEvents | None] = ContextVar("lcp_call_events", default=None)


@contextlib.contextmanager
def bound_events(events: CallEvents | None) -> Iterator[None]:
    """Make ``events`` the receiver of the notices of routes run in this context (and its threads)."""
    reset = running_call_events.set(events)
    try:
        yield
    finally:
        running_call_events.reset(reset)
