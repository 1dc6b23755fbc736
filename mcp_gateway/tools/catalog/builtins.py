"""The one registry of the built-in tools every tenant's endpoint offers next to its apps' tools.

Each ``Builtin`` holds what the catalog lists (title, description, schemas, annotations) and the
handler ``tools/call`` runs. Their names, and the order ``tools/list`` shows them in, are
``apps_runtime.wire_names.BUILTIN_TOOLS``: the runtime reserves their wire names at deploy and may
not import the gateway, so this registry is checked against that tuple when it is built.

A handler is named by its dotted path and imported on its first call: ``search_tools`` reads the
catalog, and the catalog lists these descriptors, so the registry cannot import it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from apps_runtime import records
from apps_runtime.wire_names import BUILTIN_TOOLS
from tenants.callers import Caller
from tenants.models import Tenant

_APP = {"type": "string", "description": "The app's name (see collections_list)."}
_COLLECTION = {"type": "string", "description": "The collection's name within the app."}
_ID = {"type": "string", "description": "The record's id."}
_DATA = {"type": "object", "description": "The record's fields, checked against the collection's schema."}


@dataclass(frozen=True)
class Builtin:
    """One built-in tool: its descriptor and its handler ``(tenant, caller, arguments) -> JSON``."""

    name: str
    title: str
    description: str
    build_input_schema: Callable[[], dict]
    annotations: dict
    handler: str  # dotted path, imported on the first call (see the module docstring)
    output_schema: dict | None = None
    # The handler also takes the call's ``version`` and ``ui_host`` (search_tools: tools/list entries).
    per_client: bool = False

    @property
    def input_schema(self) -> dict:
        """Built with each tenant catalog, so it follows the settings (``RECORDS_QUERY_MAX_WHERE_KEYS``)."""
        return self.build_input_schema()

    @property
    def read_only(self) -> bool:
        return self.annotations.get("readOnlyHint") is True

    def __call__(self, tenant: Tenant, caller: Caller, arguments: dict, **client: Any) -> Any:
        """Run the handler as ``caller`` (arguments already checked against ``input_schema``);
        ``client`` (``version``, ``ui_host``) goes to a ``per_client`` handler only."""
        return _handler(self.handler)(tenant, caller, arguments, **(client if self.per_client else {}))


@functools.cache
def _handler(path: str) -> Callable[[Tenant, Caller, dict], Any]:
    return import_string(path)


def _annotations(*, read_only: bool, destructive: bool = False, idempotent: bool = True) -> dict:
    # The MCP hints of a tool that works inside the tenant only (openWorldHint false).
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


READS = _annotations(read_only=True)


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

RUN_CODE = "run_code"
_RUN_CODE_DESCRIPTION = (
    "Run a short Python script that calls your tools and returns only what matters: one round trip "
    "instead of many, for multi-step work (find, then read each; filter; join). In the script, "
    "tools.call(name, arguments) returns a tool's structuredContent and raises ToolError if the call "
    "is refused or fails; tools.search(query, limit=5) finds tools (name, description, inputSchema). "
    "Assign the answer to `result`; print() output comes back too. Example: "
    "found = tools.call('<find tool>', {'query': 'Smith'}); "
    "result = [tools.call('<get tool>', {'id': x['id']}) for x in found['result'] if x['status'] == 'open']. "
    "Standard library only: no network, no files; every inner call is yours, with your rights and "
    "limits (a capped number of calls per run)."
)
_RUN_CODE_INPUT = _object(
    {"code": {"type": "string", "minLength": 1, "maxLength": 20_000, "description": "Python 3 source."}},
    ["code"],
)
_RUN_CODE_OUTPUT = {
    "type": "object",
    "properties": {
        "result": {"description": "The value bound to `result` (JSON), or null."},
        "output": {"type": "string", "description": "What the script printed (bounded)."},
        "calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "outcome": {"type": "string"},
                    "ms": {"type": "number"},
                },
            },
        },
    },
    "required": ["result", "output", "calls"],
}

_RECORDS = "mcp_gateway.tools.catalog.builtin_records."


def _registry(*builtins: Builtin) -> dict[str, Builtin]:
    """``builtins`` by name, in the order of ``BUILTIN_TOOLS``.

    Raises:
        RuntimeError: the names are not exactly ``BUILTIN_TOOLS`` (a built-in added in one place only).
    """
    by_name = {builtin.name: builtin for builtin in builtins}
    if sorted(by_name) != sorted(BUILTIN_TOOLS) or len(by_name) != len(builtins):
        raise RuntimeError(f"built-in tools {sorted(by_name)} are not apps_runtime's BUILTIN_TOOLS")
    return {name: by_name[name] for name in BUILTIN_TOOLS}


BUILTINS: dict[str, Builtin] = _registry(
    Builtin(
        "collections_list",
        "List collections",
        "List the apps of this workspace and the record collections you may read in each, "
        "with their schemas.",
        partial(_object, {}, []),
        READS,
        _RECORDS + "collections_list",
    ),
    Builtin(
        "records_query",
        "Query records",
        "Find records of a collection by exact field values, with ordering and pagination "
        "(pass next_cursor back as cursor for the next page).",
        _records_query_schema,
        READS,
        _RECORDS + "records_query",
    ),
    Builtin(
        "records_get",
        "Get a record",
        "Read one record of a collection by its id.",
        partial(_object, {"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        READS,
        _RECORDS + "records_get",
    ),
    Builtin(
        "records_create",
        "Create a record",
        "Create a record in a collection; the data must match the collection's schema.",
        partial(
            _object, {"app": _APP, "collection": _COLLECTION, "data": _DATA}, ["app", "collection", "data"]
        ),
        _annotations(read_only=False, idempotent=False),
        _RECORDS + "records_create",
    ),
    Builtin(
        "records_update",
        "Update a record",
        "Merge fields into a record; fields not given keep their values.",
        partial(
            _object,
            {"app": _APP, "collection": _COLLECTION, "id": _ID, "data": _DATA},
            ["app", "collection", "id", "data"],
        ),
        _annotations(read_only=False, destructive=True),
        _RECORDS + "records_update",
    ),
    Builtin(
        "records_delete",
        "Delete a record",
        "Delete a record of a collection by its id. This cannot be undone.",
        partial(_object, {"app": _APP, "collection": _COLLECTION, "id": _ID}, ["app", "collection", "id"]),
        _annotations(read_only=False, destructive=True),
        _RECORDS + "records_delete",
    ),
    Builtin(
        SEARCH_TOOLS,
        "Search tools",
        "Find the tools of this workspace that can do what the user asks, best first, described as "
        "tools/list describes them. Use it when no listed tool fits: then call the tool it returns by "
        "its name.",
        lambda: _SEARCH_INPUT,
        READS,
        "mcp_gateway.tools.search.tool_search.search_tools",
        _SEARCH_OUTPUT,
        per_client=True,
    ),
    Builtin(
        RUN_CODE,
        "Run code over your tools",
        _RUN_CODE_DESCRIPTION,
        lambda: _RUN_CODE_INPUT,
        _annotations(read_only=False, idempotent=False),
        # Run by tools.calls with the call's context (code_mode.run_code), never as a plain handler.
        "mcp_gateway.tools.call.code_mode.not_a_plain_builtin",
        _RUN_CODE_OUTPUT,
    ),
)
