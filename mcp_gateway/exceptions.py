"""Errors of the gateway that become JSON-RPC errors rather than tool results."""

from __future__ import annotations


class ToolUnavailable(Exception):
    """An unknown tool, one the caller may not see, or app tools switched off (JSON-RPC -32602)."""

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
