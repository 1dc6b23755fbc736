"""Descriptors of the built-in tools every tenant's endpoint offers next to its apps' tools."""

from __future__ import annotations

from dataclasses import dataclass

_APP = {"type": "string", "description": "The app's name (see collections_list)."}
_COLLECTION = {"type": "string", "description": "The collection's name within the app."}
_ID = {"type": "string", "description": "The record's id."}
_DATA = {"type": "object", "description": "The record's fields, checked against the collection's schema."}


@dataclass(frozen=True)
class BuiltinSpec:
    name: str
    title: str
    description: str
    input_schema: dict
    annotations: dict


def _object(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


BUILTIN_SPECS: tuple[BuiltinSpec, ...] = (
    BuiltinSpec(
        "collections_list",
        "List collections",
        "List the apps of this workspace and the record collections you may read in each, "
        "with their schemas.",
        {"type": "object", "properties": {}, "additionalProperties": False},
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_query",
        "Query records",
        "Find records of a collection by exact field values, with ordering and pagination "
        "(pass next_cursor back as cursor for the next page).",
        _object(
            {
                "app": _APP,
                "collection": _COLLECTION,
                "where": {
                    "type": "object",
                    "description": "Field name to exact value (string, number, boolean).",
                },
                "order_by": {"type": "string", "description": "A field name; prefix '-' for descending."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                "cursor": {"type": "string", "description": "next_cursor of the previous page."},
            },
            ["app", "collection"],
        ),
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_get",
        "Get a record",
        "Read one record of a collection by its id.",
        _object({"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_create",
        "Create a record",
        "Create a record in a collection; the data must match the collection's schema.",
        _object({"app": _APP, "collection": _COLLECTION, "data": _DATA}, ["app", "collection", "data"]),
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_update",
        "Update a record",
        "Merge fields into a record; fields not given keep their values.",
        _object(
            {"app": _APP, "collection": _COLLECTION, "id": _ID, "data": _DATA},
            ["app", "collection", "id", "data"],
        ),
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    ),
    BuiltinSpec(
        "records_delete",
        "Delete a record",
        "Delete a record of a collection by its id. This cannot be undone.",
        _object({"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    ),
)
