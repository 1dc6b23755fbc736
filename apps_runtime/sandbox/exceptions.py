"""Errors raised by the sandbox to its callers, and by brokers to the sandbox."""

from core.error_ids import error_id_note, new_error_id

from .runtime.protocol import DATA_CALL_ERROR_CODES, HANDLER_FAILURES


class HandlerFailed(Exception):
    """A handler invocation failed. Only ``kind`` and ``error_id`` may reach the end caller.

    ``trace`` is for the tenant's developers (bundle frames only, bundle-relative paths); ``logs`` is the
    handler's captured output. The full detail is logged by the sandbox under ``error_id``.
    """

    def __init__(self, kind: str, *, error_id: str | None = None, trace: str = "", logs: str = ""):
        if kind not in HANDLER_FAILURES:
            raise ValueError(f"unknown handler failure kind {kind!r}")
        self.kind = kind
        self.error_id = error_id or new_error_id()
        self.trace = trace
        self.logs = logs
        self.http_status, self.title = HANDLER_FAILURES[kind]
        super().__init__(f"{self.title} {error_id_note(self.error_id)}")

    def __reduce__(self):
        return (_rebuild_handler_failed, (self.kind, self.error_id, self.trace, self.logs))


def _rebuild_handler_failed(kind: str, error_id: str, trace: str, logs: str) -> HandlerFailed:
    return HandlerFailed(kind, error_id=error_id, trace=trace, logs=logs)


class RequestTooLarge(ValueError):
    """The request's JSON is larger than ``SandboxLimits.max_request_bytes``; nothing was run."""

    def __init__(self, size: int, limit: int):
        self.size = size
        self.limit = limit
        super().__init__(f"request is {size} bytes, the limit is {limit} bytes")


class BrokerError(Exception):
    """Raised by a broker to fail one data call; the handler sees the matching SDK exception."""

    def __init__(self, code: str, message: str):
        if code not in DATA_CALL_ERROR_CODES:
            expected = ", ".join(sorted(DATA_CALL_ERROR_CODES))
            raise ValueError(f"unknown broker error code {code!r}, expected one of {expected}")
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


class SandboxUnavailable(RuntimeError):
    """No isolation tier at least as strong as the required minimum works on this host (or a forced tier
    does not). The server should refuse to start; ``report`` maps each tier tried to why it failed.
    """

    def __init__(self, message: str, report: dict[str, str] | None = None):
        self.report = dict(report or {})
        super().__init__(message)
