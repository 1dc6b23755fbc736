"""The structural pass: ``MANIFEST_SCHEMA`` errors turned into problems that say what to change."""

import difflib
from collections.abc import Iterator
from typing import Any

from jsonschema.exceptions import ValidationError

from apps_runtime.json_schemas import compile_schema, fast_check
from apps_runtime.manifest import schema as s
from apps_runtime.manifest.problems import Problem, child, describe, pointer, shorten

NAME_HINT = "use lowercase letters, digits and underscores, starting with a letter, at most 40 characters"
_AUTH_HINT = "use public, user, internal or role:a,b"
_VALIDATOR = compile_schema(s.MANIFEST_SCHEMA)
# A valid manifest, the usual case, is passed by jsonschema-rs in microseconds; the Python validator
# runs on the rest, for the verdict and the errors the messages below are made from.
_FAST = fast_check(s.MANIFEST_SCHEMA, _VALIDATOR.dialect, asserted_formats=_VALIDATOR.asserted_formats)
_MISSING_HINTS = {
    "name": 'the app name, e.g. "case_portal"',
    "routes": 'an object of "METHOD /path" keys (it may be empty: {})',
    "handler": 'the bundle-relative path of a .py file, e.g. "server/cases/search.py"',
    "auth": "public, user, role:a,b or internal",
    "schema": 'a JSON Schema whose root is {"type": "object"}',
    "description": "what the tool does and when to use it (the model reads this)",
    "route": 'a key of "routes", e.g. "GET /cases/search"',
    "inputSchema": 'a JSON Schema of the arguments, with root {"type": "object"}',
    "type": '"object"',
    "schedule": 'a five-field cron expression, e.g. "0 3 * * *"',
    "runAs": 'the roles the job acts with, e.g. "role:case_writer"',
}
_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}
_PATTERN_HINTS = {
    s.APP_NAME_PATTERN: NAME_HINT,
    s.TOOL_NAME_PATTERN: "use lowercase letters, digits and underscores, 1 to 40 characters",
    s.AUTH_EXPRESSION_PATTERN: _AUTH_HINT + " (no spaces)",
    s.ROLE_EXPRESSION_PATTERN: "use role:a,b (no spaces)",
    s.ROUTE_KEY_PATTERN: 'use "METHOD /path", e.g. "GET /cases/{case_id}"',
    r"\.py$": "name a .py file",
}
_KEY_MAPS = {"collections": "collection", "jobs": "job", "routes": "route"}


def schema_problems(manifest: Any, *, plain: bool = False) -> Iterator[Problem]:
    """Problems ``MANIFEST_SCHEMA`` finds, each with a pointer and what to change.

    ``plain``: ``manifest`` is known to be plain JSON (``json_schemas.is_plain_json``).
    """
    if _FAST.passes(manifest, plain=plain):
        return
    for error in _VALIDATOR.iter_errors(manifest):
        yield from _convert(error)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


def _convert(error: ValidationError) -> Iterator[Problem]:
    base = pointer(*error.path)
    kind, value, instance, subschema = error.validator, error.validator_value, error.instance, error.schema
    if kind == "required":
        for key in value:
            if isinstance(instance, dict) and key not in instance:
                yield Problem(
                    child(base, key), f"missing required key {key!r}: add {_MISSING_HINTS.get(key, 'it')}"
                )
    elif kind == "additionalProperties":
        allowed = sorted(subschema.get("properties", {}))
        for key in instance:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            yield Problem(
                child(base, key),
                f"unknown key {key!r}: {hint}remove it or use one of {', '.join(allowed)}",
            )
    elif kind == "pattern" and "propertyNames" in error.schema_path:
        map_name = error.path[-1] if error.path else ""
        what = _KEY_MAPS.get(map_name, "key")
        hint = _PATTERN_HINTS.get(value, "")
        yield Problem(child(base, instance), f"{what} name {instance!r} must match {value}: {hint}")
    elif kind == "pattern":
        hint = _PATTERN_HINTS.get(value, "")
        yield Problem(base, f"{describe(instance)} must match {value}" + (f": {hint}" if hint else ""))
    elif kind == "type":
        types = value if isinstance(value, list) else [value]
        wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
        yield Problem(base, f"must be {wanted}, not {_json_type(instance)}")
    elif kind == "enum":
        allowed = ", ".join(describe(v) for v in value)
        yield Problem(base, f"must be one of {allowed}, not {describe(instance)}")
    elif kind == "const":
        yield Problem(base, f"must be {describe(value)}, not {describe(instance)}")
    elif kind in ("minimum", "maximum"):
        low, high = subschema.get("minimum"), subschema.get("maximum")
        yield Problem(base, f"{instance} is out of range: use a value from {low} to {high}")
    elif kind == "minLength" and value == 1:
        yield Problem(base, "must not be empty")
    elif kind == "maxLength":
        yield Problem(base, f"is {len(instance)} characters long: shorten it to at most {value}")
    else:
        yield Problem(base, shorten(error.message))
