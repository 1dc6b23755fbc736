"""What a JSON value from a caller or a handler must be before the platform walks or stores it.

``json.loads`` accepts what the rest of the platform cannot: lone surrogates (``"\\ud800"``), which
UTF-8, and so PostgreSQL, SQLite's text and RE2, cannot encode; and nesting deep enough that every
recursive consumer after the parser (schema validation, ``json.dumps``, jsonb) raises. Both are the
caller's mistake, so they are refused up front with a pointer, before any of those consumers runs.
"""

from __future__ import annotations

from typing import Any

from apps_runtime.handler_contract import MAX_VALUE_DEPTH


def _pointer(path: tuple) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def is_text(value: str) -> bool:
    """True when ``value`` is valid Unicode text (no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def value_problem(value: Any, *, max_depth: int = MAX_VALUE_DEPTH) -> str | None:
    """``<JSON pointer>: <message>`` for the first part of ``value`` the platform cannot hold, or None.

    Walks iteratively, so a value nested far past the interpreter's recursion limit is measured too.
    """
    stack: list[tuple[Any, tuple, int]] = [(value, (), 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return f"{_pointer(path)}: is not valid Unicode text (it holds a lone surrogate)"
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                return f"{_pointer(path)}: nests deeper than {max_depth} levels"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and not is_text(key):
                    return f"{_pointer(path)}: a key is not valid Unicode text (it holds a lone surrogate)"
                stack.append((child, (*path, key), depth + 1))
    return None
