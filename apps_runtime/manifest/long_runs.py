"""The deploy rule for long routes: a time limit past ``TIMEOUT_MS_MAX`` is for task tools only.

A task tool's caller gets a task at once and polls it, so its route may run for minutes (up to the
``TASK_MAX_TIMEOUT_MS`` setting). Any other caller (a synchronous tool call, the front-end) holds an
HTTP request open while the route runs, so a route that some non-task tool or nothing but the
front-end uses keeps the ordinary limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings

from apps_runtime.manifest import schema as s
from apps_runtime.manifest.compatibility import iter_tools
from apps_runtime.manifest.problems import Problem, pointer


def long_run_problems(manifest: Any) -> Iterator[Problem]:
    """A problem for each route whose ``timeoutMs`` is longer than the tools using it allow."""
    routes = manifest.get("routes") if isinstance(manifest, dict) else None
    if not isinstance(routes, dict):
        return
    users: dict[str, list[dict]] = {}
    for _, tool in iter_tools(manifest):
        if isinstance(tool.get("route"), str):
            users.setdefault(tool["route"], []).append(tool)
    task_max = settings.TASK_MAX_TIMEOUT_MS
    for key, spec in routes.items():
        timeout = spec.get("timeoutMs") if isinstance(spec, dict) else None
        if type(timeout) is not int or timeout <= s.TIMEOUT_MS_MAX or timeout > s.TASK_TIMEOUT_MS_CEILING:
            continue  # within the ordinary limit, or the schema pass reports it
        ptr = pointer("routes", key, "timeoutMs")
        tools = users.get(key, [])
        synchronous = [str(tool.get("name")) for tool in tools if tool.get("task") not in s.TASK_SUPPORT]
        if not tools:
            yield Problem(
                ptr,
                f"timeoutMs {timeout} is over {s.TIMEOUT_MS_MAX}, which only routes of task tools may be: "
                f'lower it, or offer the route as a tool with "task": "optional" or "required"',
            )
        elif synchronous:
            names = ", ".join(repr(name) for name in synchronous)
            yield Problem(
                ptr,
                f"timeoutMs {timeout} is over {s.TIMEOUT_MS_MAX}, which only routes of task tools may be: "
                f'set "task": "optional" or "required" on tool {names}, or lower it',
            )
        elif timeout > task_max:
            yield Problem(
                ptr,
                f"timeoutMs {timeout} is over this platform's limit for task tools (TASK_MAX_TIMEOUT_MS "
                f"{task_max}): lower it",
            )
