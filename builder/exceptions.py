"""The builder endpoint's refusals."""

from __future__ import annotations


class BuilderError(Exception):
    """A tool call refused with problems (``{"problems": [{"pointer", "message"}], "warnings"}``):
    answered as an ``isError`` result that carries them, never as a protocol error."""

    def __init__(self, message: str, details: dict):
        self.message = message
        self.details = details
        super().__init__(message)


class BuilderRefused(Exception):
    """An HTTP request the endpoint refuses before MCP: ``status`` and a one-line message."""

    def __init__(self, status: int, message: str):
        self.status = status
        self.message = message
        super().__init__(message)
