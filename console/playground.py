"""The playground's form: a tool's ``inputSchema`` as form fields, and the posted values back as arguments.

Only the shape is read here (one field per top-level property, typed by its ``type``); every check a
call gets stays the gateway's: the arguments go through ``call_from_screen`` -> ``call_tool``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PREFIX = "arg:"


@dataclass(frozen=True)
class ArgField:
    """One top-level property of the schema as the form shows it."""

    name: str
    kind: str  # "text", "number", "integer", "boolean", "choice" or "json"
    required: bool
    description: str = ""
    choices: tuple = ()
    value: str = ""


def fields_of(schema: dict, posted: dict[str, str] | None = None) -> list[ArgField]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required", [])) if isinstance(schema, dict) else set()
    fields = []
    for name, spec in (properties or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kind = {"string": "text", "number": "number", "integer": "integer", "boolean": "boolean"}.get(
            spec.get("type"), "json"
        )
        if isinstance(spec.get("enum"), list):
            kind = "choice"
        fields.append(
            ArgField(
                name=name,
                kind=kind,
                required=name in required,
                description=str(spec.get("description", "")),
                choices=tuple(json.dumps(v) if not isinstance(v, str) else v for v in spec.get("enum", [])),
                value=(posted or {}).get(PREFIX + name, ""),
            )
        )
    return fields


def arguments_of(fields: list[ArgField]) -> dict[str, Any]:
    """The typed arguments; a value that does not parse as its type is sent as typed, so the gateway's
    inputSchema check answers it (the same answer a client gets). An empty optional field is left out."""
    arguments: dict[str, Any] = {}
    for field in fields:
        raw = field.value
        if field.kind == "boolean":
            if raw:
                arguments[field.name] = raw == "true"
            continue
        if raw == "":
            continue
        if field.kind in ("number", "integer", "json"):
            try:
                arguments[field.name] = json.loads(raw)
            except json.JSONDecodeError:
                arguments[field.name] = raw
        else:
            arguments[field.name] = raw
    return arguments
