"""The JSON Schema (draft 2020-12) of ``app.json``, served to editors at ``/api/schema/manifest.json``.

It covers the structural shape. The deploy validator (``validator.py``) runs it first and then the
checks a schema cannot express: handler files that exist, duplicate roles, route conflicts, tool
routes and path parameters, metaschema validity of embedded schemas, cron fields, wire names.
``MANIFEST_SCHEMA`` is plain JSON data; patterns are valid in ECMA-262 (editors), Python and RE2.
"""

from typing import Any

from apps_runtime.auth_expr import ROLE_NAME_PATTERN
from tenants.rate_limit_rule import RATE_LIMIT_SCHEMA
from tenants.tenant_settings import setting_spec

SCHEMA_ID = "urn:lowcode-platform:schema:app-manifest:1"

APP_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
COLLECTION_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
JOB_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
TOOL_NAME_PATTERN = r"^[a-z0-9_]{1,40}$"
PARAM_NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"
LITERAL_SEGMENT_PATTERN = r"^[A-Za-z0-9._~-]+$"
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
TOOL_ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
TIMEOUT_MS_MIN = 100
TIMEOUT_MS_MAX = 30_000  # a route's limit, unless only task tools use it (``long_runs.py``)
# The absolute limit of a task tool's route; TASK_MAX_TIMEOUT_MS (a setting, at most this) is the real one.
TASK_TIMEOUT_MS_CEILING = 60 * 60 * 1000
TASK_SUPPORT = ("optional", "required")
TOOL_DESCRIPTION_MAX = 2000
# A tool's output budget in estimated tokens: the range of the tenant setting that defaults it.
MAX_OUTPUT_TOKENS_MIN = setting_spec("maxOutputTokens").minimum
MAX_OUTPUT_TOKENS_MAX = setting_spec("maxOutputTokens").maximum
# Patterns in embedded schemas run on RE2; a legitimate one is short, and the cap bounds compile cost.
SCHEMA_PATTERN_MAX = 1000

_ROLE = ROLE_NAME_PATTERN.strip("^$")
_SEGMENT = r"(?:[A-Za-z0-9._~-]+|\{[a-z_][a-z0-9_]*\})"
ROUTE_KEY_PATTERN = rf"^(?:{'|'.join(HTTP_METHODS)}) /(?:{_SEGMENT}(?:/{_SEGMENT})*)?$"
AUTH_EXPRESSION_PATTERN = rf"^(?:public|user|internal|role:{_ROLE}(?:,{_ROLE})*)$"
ROLE_EXPRESSION_PATTERN = rf"^role:{_ROLE}(?:,{_ROLE})*$"

_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "A JSON Schema (draft 2020-12 unless its own $schema says otherwise) whose root is "
        '{"type": "object"}. It must be self-contained: every $ref is local ("#/$defs/..."), and '
        "nothing is fetched. Patterns use RE2 syntax (no lookaround or backreferences)."
    ),
    "required": ["type"],
    "properties": {"type": {"const": "object", "description": "The root must describe a JSON object."}},
}

MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "App manifest (app.json)",
    "description": (
        "The manifest at the root of an app bundle: the app's routes, its collections of records, "
        "the routes it offers to MCP clients as tools, and its scheduled jobs."
    ),
    "type": "object",
    "required": ["name", "routes"],
    "additionalProperties": False,
    "properties": {
        "$schema": {
            "type": "string",
            "description": "Optional link to this schema, for editors; ignored by the platform.",
        },
        "name": {
            "type": "string",
            "pattern": APP_NAME_PATTERN,
            "title": "App name",
            "description": (
                "Lowercase letters, digits and underscores, starting with a letter, at most 40 "
                "characters. Part of every tool's wire name, so keep it short."
            ),
            "examples": ["case_portal"],
        },
        "title": {"type": "string", "title": "Display title", "examples": ["Case Portal"]},
        "description": {"type": "string", "title": "What the app is for"},
        "version": {"type": "string", "title": "Version label", "examples": ["1.0.0"]},
        "access": {
            "$ref": "#/$defs/authExpression",
            "title": "Who may use the app",
            "default": "user",
        },
        "collections": {
            "type": "object",
            "title": "Collections of records",
            "description": "Collection name to its record schema and read/write rules.",
            "propertyNames": {"pattern": COLLECTION_NAME_PATTERN},
            "additionalProperties": {"$ref": "#/$defs/collection"},
        },
        "routes": {
            "type": "object",
            "title": "Routes",
            "description": (
                'Keys are "METHOD /path" (METHOD one of GET POST PUT PATCH DELETE; {name} segments are '
                'path parameters), e.g. "GET /cases/{case_id}". May be empty.'
            ),
            "propertyNames": {"pattern": ROUTE_KEY_PATTERN},
            "additionalProperties": {"$ref": "#/$defs/route"},
        },
        "mcp": {
            "type": "object",
            "title": "MCP",
            "additionalProperties": False,
            "properties": {
                "tools": {
                    "type": "array",
                    "title": "Tools offered to MCP clients",
                    "items": {"$ref": "#/$defs/tool"},
                }
            },
        },
        "jobs": {
            "type": "object",
            "title": "Scheduled jobs",
            "description": "Job name to the internal route it calls, when, and as which roles.",
            "propertyNames": {"pattern": JOB_NAME_PATTERN},
            "additionalProperties": {"$ref": "#/$defs/job"},
        },
    },
    "$defs": {
        "authExpression": {
            "type": "string",
            "pattern": AUTH_EXPRESSION_PATTERN,
            "description": (
                "public (anyone, even anonymous), user (any member of the tenant), role:a,b (a member "
                "holding any of the roles), or internal (only jobs and other handlers). No spaces."
            ),
            "examples": ["user", "role:case_reader,case_writer", "internal", "public"],
        },
        "route": {
            "type": "object",
            "title": "Route",
            "required": ["handler", "auth"],
            "additionalProperties": False,
            "properties": {
                "handler": {
                    "type": "string",
                    "pattern": r"\.py$",
                    "description": "Bundle-relative path of the Python file defining handle(request).",
                    "examples": ["server/cases/search.py"],
                },
                "auth": {"$ref": "#/$defs/authExpression"},
                "timeoutMs": {
                    "type": "integer",
                    "minimum": TIMEOUT_MS_MIN,
                    "maximum": TASK_TIMEOUT_MS_CEILING,
                    "description": (
                        f"Time limit for one call of the handler, in milliseconds: at most {TIMEOUT_MS_MAX}, "
                        "or up to the TASK_MAX_TIMEOUT_MS setting for a route only task tools use."
                    ),
                },
                "description": {"type": "string"},
            },
        },
        "collection": {
            "type": "object",
            "title": "Collection",
            "required": ["schema"],
            "additionalProperties": False,
            "properties": {
                "schema": {**_OBJECT_SCHEMA, "title": "Schema of one record's data"},
                "read": {
                    "$ref": "#/$defs/authExpression",
                    "title": "Who may read records",
                    "default": "user",
                },
                "write": {
                    "$ref": "#/$defs/authExpression",
                    "title": "Who may create, update and delete records",
                    "description": (
                        "Defaults to the value of read, except that a public read gives a user write."
                    ),
                },
                "description": {"type": "string"},
            },
        },
        "tool": {
            "type": "object",
            "title": "MCP tool",
            "required": ["name", "description", "route", "inputSchema"],
            "additionalProperties": False,
            "properties": {
                "name": {
                    "type": "string",
                    "pattern": TOOL_NAME_PATTERN,
                    "description": "Lowercase letters, digits and underscores, 1 to 40 characters.",
                    "examples": ["find_case"],
                },
                "title": {"type": "string", "description": "Human-readable name shown by clients."},
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": TOOL_DESCRIPTION_MAX,
                    "description": "What the tool does and when to use it; the model reads this.",
                },
                "route": {
                    "type": "string",
                    "description": 'A key of "routes" that is not internal, e.g. "GET /cases/search".',
                },
                "inputSchema": {**_OBJECT_SCHEMA, "title": "Schema of the tool's arguments"},
                "outputSchema": {**_OBJECT_SCHEMA, "title": "Schema of the tool's structured result"},
                "maxOutputTokens": {
                    "type": "integer",
                    "minimum": MAX_OUTPUT_TOKENS_MIN,
                    "maximum": MAX_OUTPUT_TOKENS_MAX,
                    "title": "Output budget",
                    "description": (
                        "Most tokens (estimated: UTF-8 bytes of the result's compact JSON / 4) a result "
                        "may take; default: the tenant setting maxOutputTokens. A longer list is cut at "
                        "an item boundary and marked truncated; anything else longer is an error."
                    ),
                },
                "task": {
                    "enum": list(TASK_SUPPORT),
                    "description": (
                        "Run as an MCP task: answered at once with a task the client polls, the route "
                        "running in the background. optional: clients without tasks get the result "
                        "directly; required: only as a task."
                    ),
                },
                "confirm": {
                    "type": "boolean",
                    "default": False,
                    "description": (
                        "Ask the user to confirm (MCP elicitation) before the route runs; give it to "
                        "tools with destructiveHint true."
                    ),
                },
                "annotations": {
                    "type": "object",
                    "title": "Hints to clients",
                    "additionalProperties": False,
                    "properties": {
                        "title": {"type": "string"},
                        **{hint: {"type": "boolean"} for hint in TOOL_ANNOTATION_HINTS},
                    },
                },
                "rateLimit": RATE_LIMIT_SCHEMA,
            },
        },
        "job": {
            "type": "object",
            "title": "Scheduled job",
            "required": ["route", "schedule", "runAs"],
            "additionalProperties": False,
            "properties": {
                "route": {
                    "type": "string",
                    "description": 'A key of "routes" whose auth is internal, e.g. "POST /jobs/reindex".',
                },
                "schedule": {
                    "type": "string",
                    "description": (
                        "Five-field cron: minute hour day-of-month month day-of-week, with *, a, a-b, "
                        "a,b, */n and a-b/n; month and weekday names allowed."
                    ),
                    "examples": ["0 3 * * *", "*/15 8-18 * * mon-fri"],
                },
                "runAs": {
                    "type": "string",
                    "pattern": ROLE_EXPRESSION_PATTERN,
                    "description": "The roles the job acts with, as role:a,b.",
                    "examples": ["role:case_writer"],
                },
                "description": {"type": "string"},
            },
        },
    },
}
