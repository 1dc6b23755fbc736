"""Errors of the gateway that become JSON-RPC errors rather than tool results.

Each says what went wrong; which JSON-RPC code it becomes is chosen in one place,
``protocol.errors``, for every MCP method.
"""

from __future__ import annotations

from typing import Any

from core.error_ids import error_id_note


class Unavailable(Exception):
    """Something the caller may not use, or that does not exist: alike on the wire (JSON-RPC -32602)."""


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


class InsufficientScope(ToolUnavailable):
    """A tool the member may use that their connection does not carry (narrowed to other apps, or to
    the app read-only): the scope it needs. Over HTTP the transport answers the MCP authorization
    spec's step-up (403, ``insufficient_scope``) before the call is dispatched; elsewhere -32602."""

    def __init__(self, name: str, scope: str):
        self.scope = scope
        super().__init__(
            name,
            f"{name[:200]} is not carried by this connection: it needs the scope {scope}. Ask the "
            "person to connect again with that app (or issue a token that carries it).",
        )


class ResourceNotFound(Unavailable):
    """A URI that names no resource this caller may read (-32602; -32002 before 2026-07-28)."""

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
    """A route behind a resource, prompt or completion answered an error, or failed."""


class RouteRefused(RouteAnswerRefused):
    """The handler's own error answer (4xx): its message is shown (JSON-RPC -32602)."""


class RouteFailed(RouteAnswerRefused):
    """The handler failed, or answered what the platform refuses: only the error id or the rule is
    shown (JSON-RPC -32603)."""


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


class NotAuthenticated(Exception):
    """A request that reached a handler without an authenticated caller (JSON-RPC -32600); only
    reachable if the server were mounted without the auth layer."""

    def __init__(self) -> None:
        super().__init__("Not authenticated")


class RequestRefused(Exception):
    """A well-formed request the gateway cannot serve as asked (JSON-RPC -32600): the message says why."""


class MethodNotInThisEra(Exception):
    """A method the request's protocol revision does not have (JSON-RPC -32601, ``data``: the method)."""

    def __init__(self, method: str):
        self.method = method
        super().__init__("Method not found")


class HeaderMismatch(Exception):
    """A 2026-07-28 request whose ``Mcp-*`` header says otherwise than its params (JSON-RPC -32020)."""


class MissingClientCapability(Exception):
    """The request's client capabilities lack one the answer needs (JSON-RPC -32021); ``required``:
    the SDK's ``ClientCapabilities`` of what is missing."""

    def __init__(self, message: str, required: Any):
        self.required = required
        super().__init__(message)


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
