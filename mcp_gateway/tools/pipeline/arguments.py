"""Tool arguments checked against the tool's inputSchema, every problem with its path."""

from __future__ import annotations

from typing import Any

from apps_runtime.json_schemas import SchemaValidator
from apps_runtime.json_values import value_problem

# A problem names the rule, never the whole value: jsonschema's messages start with the value's repr
# (a 900 KB ``where`` came back whole in "... has too many properties"). Listed problems are bounded too.
MAX_MESSAGE_CHARS = 300
MAX_PROBLEMS = 20


def _message(error: Any) -> str:
    if len(error.message) <= MAX_MESSAGE_CHARS:
        return error.message
    rule = repr(error.validator_value)
    if len(rule) > 100:
        rule = rule[:100] + "..."
    return f"the value does not satisfy {error.validator} ({rule})"


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
    problems = [f"{_path(error.absolute_path)[:200]}: {_message(error)}" for error in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"... and {len(errors) - MAX_PROBLEMS} more problems")
    return problems
