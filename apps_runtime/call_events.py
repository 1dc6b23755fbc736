"""Progress and log lines a handler reports while it runs (``request.progress``, ``request.log``).

Whoever runs a route and wants them (the MCP gateway, a task) passes a ``CallEvents`` to
``run_route``; nobody else gets them (the front-end path, jobs), though log lines always land in
the run's log. What reaches a ``CallEvents`` has been checked here: the child is tenant code and
may forge any notice, so numbers are finite, texts cut to ``MAX_NOTICE_CHARS``, levels known, and
at most ``MAX_LOG_NOTICES`` log lines arrive per run. Progress only moves forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from apps_runtime import handler_contract as protocol
from apps_runtime.json_values import is_text
from apps_runtime.sandbox import BrokerError


class CallEvents(Protocol):
    """Receives a run's progress and log lines, in the worker thread that runs it: must not block."""

    def progress(self, done: float, total: float | None, message: str | None) -> None: ...

    def log(self, level: str, message: str) -> None: ...


def _number(args: dict, key: str, *, optional: bool = False) -> float | None:
    value = args.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BrokerError("invalid", f"{key} must be a finite number")
    return value


def _text(args: dict, key: str, *, optional: bool = False) -> str | None:
    value = args.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BrokerError("invalid", f"{key} must be a string")
    value = value[: protocol.MAX_NOTICE_CHARS]
    # A lone surrogate cannot be written to the caller's event stream (UTF-8): it would end the
    # stream and leave the caller an empty answer. Replaced, as a decoder replaces bad bytes.
    return value if is_text(value) else value.encode("utf-8", "replace").decode("utf-8")


def notice_ops(events: CallEvents | None) -> dict[str, Callable[[dict], Any]]:
    """Broker operations for the notices of one run, delivering to ``events`` (None: checked, dropped)."""
    state = {"done": -math.inf, "logs": 0}

    def progress(args: dict) -> None:
        done = _number(args, "done")
        total = _number(args, "total", optional=True)
        message = _text(args, "message", optional=True)
        if done <= state["done"]:
            return
        state["done"] = done
        if events is not None:
            events.progress(done, total, message)

    def log(args: dict) -> None:
        level, message = args.get("level"), _text(args, "message")
        if level not in protocol.LOG_LEVELS:
            raise BrokerError("invalid", "unknown log level")
        state["logs"] += 1
        if events is not None and state["logs"] <= protocol.MAX_LOG_NOTICES:
            events.log(level, message)

    return {protocol.PROGRESS: progress, protocol.LOG: log}
