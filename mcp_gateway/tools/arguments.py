"""Tool arguments checked against the tool's inputSchema, every problem with its path."""

from __future__ import annotations

from typing import Any

from apps_runtime.json_schemas import SchemaValidator
from apps_runtime.json_values import value_problem


def _path(parts: Any) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def argument_problems(validator: SchemaValidator, arguments: Any) -> list[str]:
    """``<JSON pointer>: <message>`` for each way ``arguments`` break the schema, in a stable order.

    Arguments no tool could take (lone surrogates, nesting past the platform's bound) are refused
    before the schema is applied: they would break the validator, the database or the sandbox.
    """
    unusable = value_problem(arguments)
    if unusable is not None:
        return [unusable]
    errors = sorted(
        validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    return [f"{_path(error.absolute_path)}: {error.message}" for error in errors]
