"""Errors of the gateway that become JSON-RPC errors rather than tool results."""

from __future__ import annotations

from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND

from core.error_ids import error_id_note


class Unavailable(Exception):
    """Something the caller may not use, or that does not exist: alike on the wire (JSON-RPC -32602)."""

    code = INVALID_PARAMS


# Said alike for a tool that does not exist and one this caller may not see (so it tells nothing of
# what exists), with the reasons a tool someone else sees can be missing from this caller's list.
UNKNOWN_TOOL_HINT = (
    "The tools this caller may use are the ones its tools/list gives: a tool may be missing for "
    "the caller's roles, or because the token or connection is read-only (only read-only tools)."
)


class ToolUnavailable(Unavailable):
    """An unknown tool, one the caller may not see, or app tools switched off (JSON-RPC -32602)."""

    def __init__(self, name: str, message: str | None = None):
        self.name = name
        super().__init__(message or f"Unknown tool: {name[:200]}. {UNKNOWN_TOOL_HINT}")


class ResourceNotFound(Unavailable):
    """A URI that names no resource this caller may read (-32602; -32002 before 2026-07-28)."""

    legacy_code = -32002  # the 2025-11-25 revision's "Resource not found"

    def __init__(self, uri: str, message: str | None = None):
        self.uri = uri
        super().__init__(message or f"Resource not found: {uri[:300]}")


class PromptUnavailable(Unavailable):
    """An unknown prompt, one the caller may not see, or app prompts switched off (JSON-RPC -32602)."""

    def __init__(self, name: str, message: str | None = None):
        self.name = name
        super().__init__(message or f"Unknown prompt: {name[:200]}")


class InvalidPromptArguments(Unavailable):
    """Prompt arguments missing, unknown or not allowed: nothing ran (JSON-RPC -32602)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("Invalid prompt arguments: " + "; ".join(problems))


class RouteAnswerRefused(Exception):
    """A route behind a resource, prompt or completion answered an error, or failed.

    ``code`` is -32602 for the handler's own 4xx answer (its message is shown) and -32603 for a
    failure, which shows only the error id.
    """

    def __init__(self, code: int, message: str):
        self.code = code
        super().__init__(message)


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
        super().__init__(f"Internal error {error_id_note(error_id)}")


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
        "member_queue": "tasks waiting to start ({limit} per member, their share of the workspace's)",
    }

    def __init__(self, scope: str, limit: int):
        self.scope = scope
        self.limit = limit
        super().__init__(
            f"Too many {self._WHAT[scope].format(limit=limit)}: wait for some to finish, or cancel some, "
            "and call again"
        )
