"""Errors of the app runtime; the edges (HTTP view, MCP gateway, commands) translate them."""

from __future__ import annotations

from core.errors import DomainError


class RuntimeDomainError(DomainError):
    """Base of the runtime's errors; ``status`` and ``code`` say how HTTP shows it."""

    status = 400
    code = "invalid_input"

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)


class AppNotFound(RuntimeDomainError):
    """No such app in this tenant, or one the caller may not open (one error for both)."""

    status, code = 404, "not_found"

    def __init__(self, name: str):
        super().__init__(f"unknown app '{name}'")


class RouteNotFound(RuntimeDomainError):
    status, code = 404, "not_found"

    def __init__(self, path: str):
        super().__init__(f"no route for '{path}'")


class MethodNotAllowed(RuntimeDomainError):
    status, code = 405, "method_not_allowed"

    def __init__(self, method: str, allowed: list[str]):
        self.allowed = allowed
        super().__init__(f"method {method} not allowed (allowed: {', '.join(allowed)})")


class AuthenticationRequired(RuntimeDomainError):
    status, code = 401, "authentication_required"

    def __init__(self) -> None:
        super().__init__("authentication required")


class PermissionDenied(RuntimeDomainError):
    status, code = 403, "permission_denied"


class RequestTooLarge(RuntimeDomainError):
    status, code = 413, "request_too_large"


class UnsupportedMediaType(RuntimeDomainError):
    status, code = 415, "unsupported_media_type"


class RecordNotFound(RuntimeDomainError):
    """No such record, or one the caller may not read."""

    status, code = 404, "not_found"


class RecordInvalid(RuntimeDomainError):
    """Data that breaks the collection's schema; ``problems`` lists each with its path."""

    status, code = 400, "invalid"

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))
