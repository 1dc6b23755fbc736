"""Code mode's runner: the one handler of the code-mode worker, run in the handler sandbox's child.

Never imported by the platform: ``code_mode.runner_dir`` copies this file into the sandbox's bundle
root and the sandbox runs it as a handler, with no app's files beside it. It runs the caller's
script with ``tools`` (each call a data call back to the platform, which runs it as the caller's own
tools/call) and ``ToolError``; ``print`` is bounded; the answer is ``{"result", "output"}``, or
``{"error": <the script's own traceback lines>, "output"}``. Everything here is as untrusted as the
script itself (it may reach any of it by introspection): the capability is the platform's side.
"""

from __future__ import annotations  # annotations are never evaluated: the child imports nothing more

import builtins
import json
import sys
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Transport = Callable[[str, dict[str, Any]], Any]

CALL = "tools.call"
SEARCH = "tools.search"
FILENAME = "<code>"


class ToolError(Exception):
    """A tool call was refused or failed; the message is the one the caller would have got."""


ToolError.__module__ = "builtins"  # shown as plain ``ToolError`` in the script's traceback


class _Output:
    """print() of the script, kept up to ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.cut = False

    def print(
        self,
        *values: object,
        sep: str | None = " ",
        end: str | None = "\n",
        file: object = None,
        flush: bool = False,
    ) -> None:
        text = (sep if sep is not None else " ").join(str(v) for v in values) + (
            end if end is not None else "\n"
        )
        room = self.limit - self.size
        if len(text) > room:
            text, self.cut = text[: max(room, 0)], True
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        joined = "".join(self.parts)
        return joined + (f"\n[output cut at {self.limit} characters]" if self.cut else "")


class _Tools:
    """What the script calls: ``tools.call`` and ``tools.search``."""

    # ``data_error``: the handler SDK's RecordsError, whose ``message`` is what the caller would get.
    def __init__(self, transport: Transport, data_error: type[Any]) -> None:
        self._transport = transport
        self._data_error = data_error

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The tool's structuredContent; raises ToolError when the call is refused or fails."""
        return self._ask(CALL, {"name": name, "arguments": arguments})

    def search(self, query: str, limit: int = 5) -> Any:
        """The tools of yours that best fit ``query``: [{"name", "title", "description", "inputSchema"}]."""
        return self._ask(SEARCH, {"query": query, "limit": limit})

    def _ask(self, op: str, args: dict[str, Any]) -> Any:
        try:
            return self._transport(op, args)
        except self._data_error as err:
            raise ToolError(err.message) from None


def _script_trace(exc: BaseException, source_lines: list[str]) -> str:
    """The traceback lines of the script's own frames only (never the runner's or the platform's)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
    lines = ["Traceback (most recent call last):\n"]
    for frame in frames:
        lines.append(f'  File "{FILENAME}", line {frame.lineno}, in {frame.name}\n')
        if frame.lineno and 0 < frame.lineno <= len(source_lines):
            lines.append(f"    {source_lines[frame.lineno - 1].strip()}\n")
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines)


def handle(request: Any) -> dict[str, Any]:
    # The handler SDK, which the child registers as ``platform_sdk`` for each call: its data-call error.
    data_error = sys.modules["platform_sdk"].RecordsError

    code = request.body.get("code")
    output = _Output(int(request.body.get("max_output") or 0))
    if not isinstance(code, str):
        return {"error": "code must be a string", "output": ""}
    names = dict(vars(builtins))
    names["print"] = output.print
    scope = {
        "__name__": "__code__",
        "__builtins__": names,
        "tools": _Tools(request._transport, data_error),
        "ToolError": ToolError,
        "result": None,
    }
    try:
        exec(compile(code, FILENAME, "exec"), scope)  # noqa: S102 -- the point: the sandbox is the boundary
    except MemoryError:
        raise
    except BaseException as exc:  # the script's own failure, told in its own lines
        return {"error": _script_trace(exc, code.splitlines()), "output": output.text()}
    result = scope.get("result")
    try:
        json.dumps(result)
    except (TypeError, ValueError, RecursionError) as exc:
        return {"error": f"result is not JSON: {exc}\n", "output": output.text()}
    return {"result": result, "output": output.text()}
