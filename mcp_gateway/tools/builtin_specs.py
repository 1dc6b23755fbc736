"""Descriptors of the built-in tools every tenant's endpoint offers next to its apps' tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.conf import settings

from apps_runtime import records

_APP = {"type": "string", "description": "The app's name (see collections_list)."}
_COLLECTION = {"type": "string", "description": "The collection's name within the app."}
_ID = {"type": "string", "description": "The record's id."}
_DATA = {"type": "object", "description": "The record's fields, checked against the collection's schema."}


@dataclass(frozen=True)
class BuiltinSpec:
    name: str
    title: str
    description: str
    build_input_schema: Callable[[], dict]
    annotations: dict
    output_schema: dict | None = None

    @property
    def input_schema(self) -> dict:
        """Built with each tenant catalog, so it follows the settings (``RECORDS_QUERY_MAX_WHERE_KEYS``)."""
        return self.build_input_schema()


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _records_query_schema() -> dict:
    # Field names follow apps_runtime.records.check_query, the one place of that rule (handlers reach
    # it without this schema): the descriptions say it in words, and check_query's refusal says what
    # a filter can do, where a pattern here would answer a bare regex.
    return _object(
        {
            "app": _APP,
            "collection": _COLLECTION,
            "where": {
                "type": "object",
                "description": "Field name to exact value (string, number, boolean or null). Plain field "
                "names only: letters, digits and single underscores, no '__' lookups.",
                "maxProperties": settings.RECORDS_QUERY_MAX_WHERE_KEYS,
                # No pattern here: a name such as qty__gt is refused by check_query, which says why
                # in words ("filters are exact matches on field names") instead of a bare regex.
                "propertyNames": {"maxLength": records.FIELD_NAME_MAX_LENGTH},
                # anyOf rather than a type array, which some clients' schema checks warn about.
                "additionalProperties": {
                    "anyOf": [
                        {"type": "string", "maxLength": records.WHERE_VALUE_MAX_CHARS},
                        {"type": "number"},
                        {"type": "boolean"},
                        {"type": "null"},
                    ]
                },
            },
            "order_by": {
                "type": "string",
                "description": "A field name; prefix '-' for descending.",
                "maxLength": records.FIELD_NAME_MAX_LENGTH + 1,
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": records.MAX_LIMIT, "default": 50},
            "cursor": {
                "type": "string",
                "description": "next_cursor of the previous page.",
                "maxLength": records.CURSOR_MAX_CHARS,
            },
        },
        ["app", "collection"],
    )


SEARCH_TOOLS = "search_tools"
SEARCH_LIMIT_MAX = 20
SEARCH_LIMIT_DEFAULT = 5
SEARCH_QUERY_MAX_CHARS = 1000

_SEARCH_INPUT = _object(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": SEARCH_QUERY_MAX_CHARS,
            "description": "What the user wants done, in their own words.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": SEARCH_LIMIT_MAX,
            "default": SEARCH_LIMIT_DEFAULT,
            "description": "Most tools to return.",
        },
    },
    ["query"],
)
# Not closed (no additionalProperties: false): a result over the output budget gains "truncated".
_SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "description": "Matching tools, best first, each exactly as tools/list describes it.",
            "items": {"type": "object"},
        },
        "canSatisfyIntent": {"type": "boolean"},
        "summary": {"type": "string"},
        "nextSteps": {"type": "string"},
    },
    "required": ["tools", "canSatisfyIntent", "summary", "nextSteps"],
}

BUILTIN_SPECS: tuple[BuiltinSpec, ...] = (
    BuiltinSpec(
        "collections_list",
        "List collections",
        "List the apps of this workspace and the record collections you may read in each, "
        "with their schemas.",
        partial(_object, {}, []),
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_query",
        "Query records",
        "Find records of a collection by exact field values, with ordering and pagination "
        "(pass next_cursor back as cursor for the next page).",
        _records_query_schema,
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_get",
        "Get a record",
        "Read one record of a collection by its id.",
        partial(_object, {"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_create",
        "Create a record",
        "Create a record in a collection; the data must match the collection's schema.",
        partial(
            _object, {"app": _APP, "collection": _COLLECTION, "data": _DATA}, ["app", "collection", "data"]
        ),
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_update",
        "Update a record",
        "Merge fields into a record; fields not given keep their values.",
        partial(
            _object,
            {"app": _APP, "collection": _COLLECTION, "id": _ID, "data": _DATA},
            ["app", "collection", "id", "data"],
        ),
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_delete",
        "Delete a record",
        "Delete a record of a collection by its id. This cannot be undone.",
        partial(_object, {"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        SEARCH_TOOLS,
        "Search tools",
        "Find the tools of this workspace that can do what the user asks, best first, described as "
        "tools/list describes them. Use it when no listed tool fits: then call the tool it returns by "
        "its name.",
        lambda: _SEARCH_INPUT,
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
        _SEARCH_OUTPUT,
    ),
)
