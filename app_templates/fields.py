"""The fields of a template's record collection: names and types checked before anything is written.

A field becomes a property of the collection's JSON Schema and of the create and update tools'
``inputSchema``; its name is also a key the handlers read, so names follow the manifest's own rule
for names and may not take the names the template itself uses (``id``, ``item_id``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app_templates.exceptions import TemplateError

FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_FIELDS = 20
# The record's own id, the route's parameter, and the record's timestamps the list orders by.
RESERVED = frozenset({"id", "item_id", "created_at", "updated_at"})

# Each type as a JSON Schema property. A required text gets minLength 1: an empty string is not a value.
_SCHEMAS: dict[str, dict] = {
    "string": {"type": "string", "maxLength": 200},
    "text": {"type": "string", "maxLength": 2000},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "date": {"type": "string", "format": "date"},
}
FIELD_TYPES = tuple(_SCHEMAS)
TYPE_LABELS = {
    "string": "short text (up to 200 characters)",
    "text": "long text (up to 2,000 characters)",
    "integer": "whole number",
    "number": "number",
    "boolean": "yes / no",
    "date": "date (YYYY-MM-DD)",
}
# The field a new item starts without (``False``) and ``list_items`` can leave out (``open_only``).
FLAG = "done"


@dataclass(frozen=True)
class Field:
    """One field of the collection, as the admin or ``lcp init --field`` gave it."""

    name: str
    type: str
    required: bool = False

    def schema(self) -> dict:
        found = dict(_SCHEMAS[self.type])
        if self.required and found["type"] == "string" and "format" not in found:
            found = {"type": "string", "minLength": 1, "maxLength": found["maxLength"]}
        return found

    @property
    def is_flag(self) -> bool:
        return self.name == FLAG and self.type == "boolean"


DEFAULT_FIELDS = (Field("title", "string", required=True), Field("notes", "text"), Field(FLAG, "boolean"))


def name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a field name (None: nothing)."""
    if not name:
        return "give the field a name, or remove it"
    if not FIELD_NAME.fullmatch(name):
        return (
            f"'{name[:60]}' is not a field name: lowercase letters, digits and _, a letter first, at most 40"
        )
    if name in RESERVED:
        return f"'{name}' is the template's own: choose another name than {', '.join(sorted(RESERVED))}"
    return None


def type_problem(kind: str) -> str | None:
    """What is wrong with ``kind`` as a field type (None: nothing)."""
    if kind not in _SCHEMAS:
        return f"'{kind[:60]}' is not a field type: one of {', '.join(FIELD_TYPES)}"
    return None


def check_fields(fields: list[Field] | tuple[Field, ...]) -> tuple[Field, ...]:
    """``fields`` if they make a collection, else every problem, each naming its field.

    Raises:
        TemplateError: no field, too many, a bad name or type, or a name given twice.
    """
    problems = []
    if not fields:
        problems.append("give the collection at least one field")
    if len(fields) > MAX_FIELDS:
        problems.append(f"at most {MAX_FIELDS} fields")
    seen: set[str] = set()
    for number, field in enumerate(fields, start=1):
        for problem in (name_problem(field.name), type_problem(field.type)):
            if problem:
                problems.append(f"field {number}: {problem}")
        if field.name in seen:
            problems.append(f"field {number}: '{field.name}' is given twice")
        seen.add(field.name)
    if problems:
        raise TemplateError(problems)
    return tuple(fields)


def parse_field(spec: str) -> Field:
    """A field from ``name:type[:required]`` (``lcp init --field``).

    Raises:
        TemplateError: not of that shape, or a bad name or type.
    """
    parts = spec.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "required"):
        raise TemplateError([f"'{spec[:80]}' is not a field: write name:type or name:type:required"])
    problems = [p for p in (name_problem(parts[0]), type_problem(parts[1])) if p]
    if problems:
        raise TemplateError(problems)
    return Field(parts[0], parts[1], required=len(parts) == 3)
