"""Deploy checks of the JSON Schemas a manifest embeds (tool inputSchema/outputSchema, collection schemas).

Beyond an object root and validity against its draft's metaschema, an embedded schema must be
self-contained and runnable on the platform's engines (``apps_runtime.json_schemas``):

- ``$ref`` and ``$dynamicRef`` are local (``#``, ``#/json/pointer`` or ``#anchor``) and point at a
  schema inside the document; ``$recursiveRef`` is ``#``. Nothing is ever fetched.
- ``$id`` (``id`` in drafts 3 and 4) appears only at the root, as a plain identifier without a
  fragment: it names the document and is never fetched. An embedded ``$id`` would start a new
  document, so ``#`` references inside it would no longer point into this one; ``$anchor`` names
  a subschema instead.
- ``$schema`` names a published JSON Schema draft; it identifies the dialect and is never fetched.
- ``pattern`` values and ``patternProperties`` keys compile on RE2, in at most
  ``SCHEMA_PATTERN_MAX`` characters.
- No loop of references and other same-value keywords: checking a value must end
  (``schema_cycles``).

Every object in the schema is read as a (possible) subschema, except the values of ``const``,
``enum``, ``default`` and ``examples`` (data) and the keys of maps of names such as ``properties``.
"""

from typing import Any

from apps_runtime.json_schemas import (
    SCHEMA_FAULTS,
    dialect_for,
    fast_metaschema_check,
    local_lookup,
    metaschema_validator,
    pattern_problem,
)
from apps_runtime.manifest import schema as s
from apps_runtime.manifest.problems import Problem, child, describe, shorten
from apps_runtime.manifest.schema_cycles import reference_loop_problems

_ABSENT = object()
_NAME_MAPS = frozenset(
    ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
)
_DATA = frozenset(("const", "enum", "default", "examples"))
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_SELF_CONTAINED = "schemas must be self-contained and nothing is fetched"


def embedded_schema_problems(value: dict, ptr: str, what: str, *, plain: bool = False) -> list[Problem]:
    """Everything wrong with the schema ``value`` found at ``ptr``; ``what`` names it in messages.

    ``plain``: ``value`` is known to be plain JSON (``json_schemas.is_plain_json``).
    """
    problems: list[Problem] = []
    root_type = value.get("type", _ABSENT)
    root_type_ok = root_type == "object"
    if not root_type_ok:
        found = "missing" if root_type is _ABSENT else describe(root_type)
        problems.append(
            Problem(child(ptr, "type"), f'the root of {what} must be {{"type": "object"}}, not {found}')
        )
    dialect = dialect_for(value)
    if dialect is None:
        problems.append(Problem(child(ptr, "$schema"), _unknown_dialect(value["$schema"])))
        return problems
    # The safety rules first: a schema that breaks any of them never reaches jsonschema-rs.
    problems += _Walk(value, ptr, dialect).problems()
    if not problems:  # every reference resolves: follow them
        problems += reference_loop_problems(value, ptr, dialect)
    if problems or not fast_metaschema_check(dialect).passes(value, plain=plain):
        problems += _metaschema_problems(value, ptr, what, dialect, skip_root_type=not root_type_ok)
    return problems


def _unknown_dialect(declared: Any) -> str:
    return (
        f"unknown $schema {describe(declared)}: omit it (draft 2020-12 is assumed) or name a "
        "published JSON Schema draft"
    )


def _metaschema_problems(
    value: dict, ptr: str, what: str, dialect: type, *, skip_root_type: bool
) -> list[Problem]:
    try:
        errors = list(metaschema_validator(dialect).iter_errors(value))
    except SCHEMA_FAULTS:
        return [Problem(ptr, f"{what} could not be checked against its metaschema: simplify it")]
    return [
        Problem(child(ptr, *error.path), f"{what} is not a valid JSON Schema here: {shorten(error.message)}")
        for error in errors
        if not (skip_root_type and list(error.path) == ["type"])
    ]


class _Walk:
    """One pass over every subschema (iterative: depth is bounded by the bundle, not the stack).

    Places are tuples of tokens under the schema's pointer, made into a pointer only for a problem.
    """

    def __init__(self, schema: dict, ptr: str, dialect: type):
        self.schema = schema
        self.root = ptr
        self.dialect = dialect
        self.id_keyword = "id" if dialect.__name__ in ("Draft3Validator", "Draft4Validator") else "$id"
        self.found: list[Problem] = []
        self._lookup: Any = None

    def problems(self) -> list[Problem]:
        stack: list[tuple[Any, tuple]] = [(self.schema, ())]
        while stack:
            node, at = stack.pop()
            if isinstance(node, list):
                stack += [(item, (*at, index)) for index, item in enumerate(node)]
            elif isinstance(node, dict):
                self.visit(node, at, stack)
        return self.found

    def add(self, at: tuple, message: str) -> None:
        self.found.append(Problem(child(self.root, *at), message))

    def visit(self, node: dict, at: tuple, stack: list[tuple[Any, tuple]]) -> None:
        """Check one schema object; push what to visit under it onto ``stack``."""
        for key, value in node.items():
            if key in _DATA:
                continue
            if key in _REFERENCES and isinstance(value, str):
                self.check_reference(key, value, (*at, key))
            elif key == self.id_keyword and isinstance(value, str):
                self.check_id(value, (*at, key), at_root=not at)
            elif key == "$schema" and at and dialect_for({"$schema": value}) is None:
                self.add((*at, key), _unknown_dialect(value))
            elif key == "pattern" and isinstance(value, str):
                self.check_pattern(value, (*at, key))
            if key in _NAME_MAPS and isinstance(value, dict):
                for name, subschema in value.items():
                    if key == "patternProperties":
                        self.check_pattern(name, (*at, key, name))
                    stack.append((subschema, (*at, key, name)))
            elif isinstance(value, dict | list):
                stack.append((value, (*at, key)))

    def check_reference(self, keyword: str, ref: str, at: tuple) -> None:
        if not ref.startswith("#"):
            self.add(
                at,
                f"{keyword} {describe(ref)} points outside this schema: {_SELF_CONTAINED}, so every "
                f"{keyword} is local; put the schema under $defs and refer to it as '#/$defs/<name>'",
            )
            return
        if keyword == "$recursiveRef" and ref != "#":
            self.add(at, f"$recursiveRef must be '#', not {describe(ref)}")
            return
        target = self.resolve(ref)
        if target is _ABSENT:
            self.add(at, f"{keyword} {describe(ref)} points at nothing in this schema: fix the pointer")
        elif not isinstance(target, dict | bool):
            self.add(at, f"{keyword} {describe(ref)} points at {describe(target)}, which is not a schema")

    def resolve(self, ref: str) -> Any:
        try:
            if self._lookup is None:
                self._lookup = local_lookup(self.schema, self.dialect)
            return self._lookup(ref)
        except SCHEMA_FAULTS:
            return _ABSENT

    def check_id(self, value: str, at: tuple, *, at_root: bool) -> None:
        keyword = self.id_keyword
        if not at_root:
            self.add(
                at,
                f"{keyword} is allowed only at the root of the schema: an embedded {keyword} starts a new "
                "document, so '#' references inside it would no longer point into this one; remove it "
                "(use $anchor to name a subschema)",
            )
        elif value.partition("#")[2]:
            self.add(
                at,
                f"{keyword} {describe(value)} must not have a fragment: name the document (e.g. "
                "'urn:my-app:input') and use $anchor for subschemas",
            )

    def check_pattern(self, pattern: str, at: tuple) -> None:
        if len(pattern) > s.SCHEMA_PATTERN_MAX:
            self.add(
                at,
                f"the pattern is {len(pattern)} characters long: shorten it to at most "
                f"{s.SCHEMA_PATTERN_MAX}",
            )
            return
        reason = pattern_problem(pattern)
        if reason is not None:
            self.add(
                at,
                f"the pattern {describe(pattern)} uses a regex feature that is not supported: {reason}; "
                "patterns run on RE2 syntax (no lookaround or backreferences)",
            )
