"""Client-compatibility warnings: tools that some MCP clients handle badly. The deploy goes ahead.

- Schema dialect: some clients reject ``$ref``/``$defs``/``definitions``, ``not`` or a root
  ``anyOf``/``oneOf``/``allOf``, and then drop the whole server, not just the tool.
- Annotations: without ``readOnlyHint``/``destructiveHint`` clients treat a tool as destructive and ask
  before every call; some refuse a tool without ``destructiveHint``.
- Confirmation: a tool with ``destructiveHint: true`` should have ``confirm: true``, so the gateway
  asks the user before it runs.
- Descriptions under ``SHORT_DESCRIPTION`` characters rarely tell a model when to pick the tool.
"""

from collections.abc import Iterator
from typing import Any

from apps_runtime.manifest.problems import Problem, child, pointer

SHORT_DESCRIPTION = 20


def iter_tools(manifest: Any) -> Iterator[tuple[int, dict]]:
    """(index, tool) for each tool of ``mcp.tools`` that is an object; tolerates any manifest."""
    mcp = manifest.get("mcp") if isinstance(manifest, dict) else None
    tools = mcp.get("tools") if isinstance(mcp, dict) else None
    if isinstance(tools, list):
        for index, tool in enumerate(tools):
            if isinstance(tool, dict):
                yield index, tool


def compatibility_warnings(manifest: Any) -> Iterator[Problem]:
    """Warnings about tools that some MCP clients handle badly; the deploy still goes ahead."""
    for index, tool in iter_tools(manifest):
        base = pointer("mcp", "tools", index)
        for key in ("inputSchema", "outputSchema"):
            if isinstance(tool.get(key), dict):
                yield from _schema_dialect_warnings(tool[key], child(base, key))
        annotations = tool.get("annotations")
        annotations = annotations if isinstance(annotations, dict) else {}
        missing = [hint for hint in ("readOnlyHint", "destructiveHint") if hint not in annotations]
        if missing:
            yield Problem(
                child(base, "annotations"),
                f"add {' and '.join(missing)}: without them clients treat the tool as destructive and "
                "ask before each call, and some (OpenAI) refuse a tool without destructiveHint",
            )
        if annotations.get("destructiveHint") is True and tool.get("confirm") is not True:
            yield Problem(
                child(base, "confirm"),
                'destructiveHint is true but confirm is not: add "confirm": true so the user is asked '
                "before each call (agents call tools with nobody watching)",
            )
        description = tool.get("description")
        if isinstance(description, str) and 0 < len(description.strip()) < SHORT_DESCRIPTION:
            yield Problem(
                child(base, "description"),
                f"description is shorter than {SHORT_DESCRIPTION} characters: say what the tool does and "
                "when to use it, so models pick it correctly",
            )


# Keywords whose value is a map of name -> subschema, a subschema, or a list of subschemas.
_SUBSCHEMA_MAPS = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
)
_SUBSCHEMA_ONE = (
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "items",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_DIALECT_WARNINGS = {
    "$ref": "some clients (Gemini CLI, Copilot CLI) reject $ref and drop the whole server: inline the schema",
    "$dynamicRef": "some clients reject $dynamicRef and drop the whole server: inline the schema",
    "$defs": "some clients (Gemini CLI, Copilot CLI) reject $defs and drop the whole server: inline them",
    "definitions": "some clients reject definitions and drop the whole server: inline them",
    "not": "some clients reject 'not' and drop the whole server: describe the allowed values instead",
}


def _schema_dialect_warnings(schema: dict, ptr: str) -> Iterator[Problem]:
    for keyword in ("anyOf", "oneOf", "allOf"):
        if keyword in schema:
            yield Problem(
                child(ptr, keyword),
                f"a root {keyword} is rejected by some clients, which want a plain object root: "
                "merge the alternatives into one object schema",
            )
    for at, subschema in _subschemas(schema, ptr):
        for keyword, message in _DIALECT_WARNINGS.items():
            if keyword in subschema:
                yield Problem(child(at, keyword), message)


def _subschemas(schema: dict, ptr: str) -> Iterator[tuple[str, dict]]:
    """Every schema object inside ``schema`` (itself included), with its pointer."""
    yield ptr, schema
    for keyword in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(keyword), dict):
            for name, sub in schema[keyword].items():
                if isinstance(sub, dict):
                    yield from _subschemas(sub, child(ptr, keyword, name))
    for keyword in _SUBSCHEMA_ONE:
        if isinstance(schema.get(keyword), dict):
            yield from _subschemas(schema[keyword], child(ptr, keyword))
    for keyword in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(keyword), list):
            for index, sub in enumerate(schema[keyword]):
                if isinstance(sub, dict):
                    yield from _subschemas(sub, child(ptr, keyword, index))
