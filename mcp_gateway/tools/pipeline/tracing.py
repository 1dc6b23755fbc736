"""The W3C trace context an MCP request carries in ``_meta`` (SEP-414), for the call it starts.

A ``traceparent`` (``00-<trace id>-<parent id>-<flags>``, checked: it is the client's) is kept in
the request's ``CallContext``: the audit row stores its trace id and the handler gets it as
``request.traceparent``, so a trace can be followed into both. Anything malformed is dropped,
never echoed.
"""

from __future__ import annotations

import re
from typing import Any

_TRACEPARENT = re.compile(r"^00-(?P<trace>[0-9a-f]{32})-(?P<parent>[0-9a-f]{16})-[0-9a-f]{2}$")
_INVALID = "0" * 32


def traceparent_of(params: Any) -> str | None:
    """The valid ``traceparent`` in a request's raw params' ``_meta``, if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    value = meta.get("traceparent") if isinstance(meta, dict) else None
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.match(value)
    if match is None or match["trace"] == _INVALID or match["parent"] == "0" * 16:
        return None
    return value
