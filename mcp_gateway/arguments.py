"""Tool arguments checked against the tool's inputSchema, every problem with its path."""

from __future__ import annotations

from typing import Any

from apps_runtime.json_schemas import SchemaValidator


def _path(parts: Any) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def argument_problems(validator: SchemaValidator, arguments: Any) -> list[str]:
    """``<JSON pointer>: <message>`` for each way ``arguments`` break the schema, in a stable order."""
    errors = sorted(
        validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    return [f"{_path(error.absolute_path)}: {error.message}" for error in errors]
