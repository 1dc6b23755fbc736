"""Errors of the gateway that become JSON-RPC errors rather than tool results."""

from __future__ import annotations

from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND


class ToolUnavailable(Exception):
    """An unknown tool, one the caller may not see, or app tools switched off (JSON-RPC -32602)."""

    code = INVALID_PARAMS

    def __init__(self, name: str, message: str | None = None):
        self.name = name
        super().__init__(message or f"Unknown tool: {name}")


class InvalidCursor(Exception):
    """A tools/list cursor this server did not issue (JSON-RPC -32602)."""

    def __init__(self) -> None:
        super().__init__("Invalid cursor")


class InternalError(Exception):
    """A platform fault while serving a request (JSON-RPC -32603): only the error id reaches the caller.

    The exception itself is logged under ``error_id`` where it was caught.
    """

    def __init__(self, error_id: str):
        self.error_id = error_id
        super().__init__(f"Internal error (error id {error_id})")


class GatewayRefused(Exception):
    """A request refused before MCP handling: carries the HTTP status and a message for the body."""

    def __init__(self, status: int, message: str):
        self.status = status
        self.message = message
        super().__init__(message)


class TaskModeRefused(ToolUnavailable):
    """A task tool called the way its ``task`` option forbids (JSON-RPC -32601, as the spec asks).

    ``required`` without task augmentation, or task augmentation of a tool without ``task``.
    """

    code = METHOD_NOT_FOUND


class TaskNotFound(Exception):
    """No task of this caller has this id: unknown, expired, or another caller's (JSON-RPC -32602)."""

    def __init__(self, task_id: str):
        self.task_id = task_id
        super().__init__(f"Task not found: {task_id}"[:200])


class TaskFinished(Exception):
    """A cancel of a task that has already ended (JSON-RPC -32602)."""

    def __init__(self, task_id: str, status: str):
        self.task_id = task_id
        self.status = status
        super().__init__(f"Task {task_id} is already {status}: it cannot be cancelled")


class TaskLimitReached(Exception):
    """Too many unfinished tasks for the credential, the member or the tenant, or too many of the
    tenant's still waiting to start: no task was created."""

    _WHAT = {
        "caller": "unfinished tasks ({limit} per credential)",
        "member": "unfinished tasks ({limit} per member)",
        "tenant": "unfinished tasks ({limit} per workspace)",
        "queue": "tasks waiting to start ({limit} per workspace)",
    }

    def __init__(self, scope: str, limit: int):
        self.scope = scope
        self.limit = limit
        super().__init__(
            f"Too many {self._WHAT[scope].format(limit=limit)}: wait for some to finish, or cancel some, "
            "and call again"
        )
