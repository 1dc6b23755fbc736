"""Which way a tool may be called: the manifest's ``task`` option as the spec's ``execution.taskSupport``.

- no ``task`` (spec: forbidden): synchronous only; a task-augmented call is refused.
- ``optional``: either; a client without tasks (a 2026-07-28 request that does not declare the tasks
  extension among them) gets the result synchronously, under the ordinary time limit.
- ``required``: task-augmented only; a plain call is refused.

2025-11-25 answers a refused mode with JSON-RPC -32601 (``TaskModeRefused``); on 2026-07-28 the
server decides (``protocol/tasks.py``), and a required tool without the extension is -32021.
"""

from __future__ import annotations

from mcp_gateway.exceptions import TaskModeRefused
from mcp_gateway.tools.catalog.catalog import CatalogEntry

OPTIONAL = "optional"
REQUIRED = "required"


def refuse_synchronous_call(entry: CatalogEntry) -> None:
    """Raises ``TaskModeRefused`` when ``entry`` may only be called as a task."""
    if entry.task_support == REQUIRED:
        raise TaskModeRefused(
            entry.wire_name,
            f"Tool {entry.wire_name} must be called as a task (tools/call with params.task, protocol "
            "2025-11-25): it runs too long to answer in one request",
        )


def refuse_task_call(entry: CatalogEntry) -> None:
    """Raises ``TaskModeRefused`` when ``entry`` may not be called as a task."""
    if entry.task_support not in (OPTIONAL, REQUIRED):
        raise TaskModeRefused(
            entry.wire_name,
            f"Tool {entry.wire_name} does not support task-augmented calls: call it without params.task",
        )
