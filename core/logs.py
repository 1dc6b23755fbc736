"""Log lines as JSON objects (``LOG_FORMAT=json``), each with the error id and the trace id.

The trace id is the request's (the W3C ``traceparent`` trace id when the client or the proxy sent
one, else a new one) or the Celery task's id, kept in a context variable that follows the request
into its threads. The error id is the ``err_...`` the line is about: passed as ``extra={"error_id":
...}``, or found in the message (every place that logs one names it there). Both keys are on every
line, ``null`` when there is none, so a log query can rely on them.
"""

from __future__ import annotations

import json
import logging
import random
import re
from contextvars import ContextVar
from datetime import UTC, datetime

trace_id: ContextVar[str | None] = ContextVar("trace_id", default=None)

_ERROR_ID = re.compile(r"\berr_[0-9A-HJKMNP-TV-Z]{26}\b")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-(?P<trace>[0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def trace_id_from(traceparent: str | None) -> str:
    """The trace id of a W3C ``traceparent`` header, or a new one when it is missing or malformed."""
    found = _TRACEPARENT.match(traceparent.strip().lower()) if traceparent else None
    if found and found["trace"] != "0" * 32:
        return found["trace"]
    # Not ``secrets``: a trace id names a request, it guards nothing, and os.urandom gives up the GIL
    # on every request, so the event loop then waits behind the busy worker threads to take it back.
    return f"{random.getrandbits(128) or 1:032x}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, error_id, trace_id (and exception)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        error_id = getattr(record, "error_id", None)
        if error_id is None:
            found = _ERROR_ID.search(message)
            error_id = found.group(0) if found else None
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": message,
            "error_id": error_id,
            "trace_id": getattr(record, "trace_id", None) or trace_id.get(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)
