"""The JSON Schema (draft 2020-12) of ``app.json``, served to editors at ``/api/schema/manifest.json``.

It covers the structural shape. The deploy validator (``validator.py``) runs it first and then the
checks a schema cannot express: handler files that exist, duplicate roles, route conflicts, tool
routes and path parameters, metaschema validity of embedded schemas, cron fields, wire names.
``MANIFEST_SCHEMA`` is plain JSON data; patterns are valid in ECMA-262 (editors), Python and RE2.
"""

from typing import Any

from apps_runtime import conf
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
TASK_TIMEOUT_MS_CEILING = conf.TASK_TIMEOUT_MS_CEILING
TASK_SUPPORT = ("optional", "required")
TOOL_DESCRIPTION_MAX = 2000
# Resources and prompts (``mcp.resources``, ``mcp.prompts``): names follow the tools' rule.
RESOURCE_NAME_PATTERN = TOOL_NAME_PATTERN
PROMPT_NAME_PATTERN = TOOL_NAME_PATTERN
ARGUMENT_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,39}$"  # MCP clients use camelCase (resourceUri)
MIME_TYPE_PATTERN = (
    r"^[A-Za-z0-9.+-]{1,64}/[A-Za-z0-9.+-]{1,64}(?:;[ ]?[A-Za-z0-9.+-]{1,64}=[A-Za-z0-9.+-]{1,64})?$"
)
PROMPT_ROLES = ("user", "assistant")
ENUM_MAX_ITEMS = 100
PROMPT_MESSAGES_MAX = 50
PROMPT_ARGUMENTS_MAX = 20
PROMPT_TEXT_MAX = 20_000
# A tool's search keywords: enough for its synonyms, too few to stuff an index with.
TOOL_KEYWORDS_MAX = 20
TOOL_KEYWORD_MAX_CHARS = 60
# A tool's output budget in estimated tokens: the range of the tenant setting that defaults it.
MAX_OUTPUT_TOKENS_MIN = setting_spec("maxOutputTokens").minimum
# A tool's approvalTtl (seconds): a minute to a week.
APPROVAL_TTL_MIN = 60
APPROVAL_TTL_MAX = 7 * 86400
MAX_OUTPUT_TOKENS_MAX = setting_spec("maxOutputTokens").maximum
# Screens (``screens``): HTML views of the app, served on its front-end path and as MCP Apps.
SCREEN_NAME_PATTERN = TOOL_NAME_PATTERN
UI_VISIBILITY = ("model", "app")
CSP_DOMAIN_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
CSP_DOMAINS_MAX = 20
# An origin a screen may reach: https (or http on loopback, for development), a host or a
# leading-wildcard host, an optional port; no path, quote, space or semicolon (it is put in a CSP).
CSP_DOMAIN_PATTERN = (
    r"^(?:https://(?:\*\.)?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
    r"|http://(?:localhost|127\.0\.0\.1))(?::[0-9]{1,5})?$"
)
UI_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
# Patterns in embedded schemas run on RE2; a legitimate one is short, and the cap bounds compile cost.
SCHEMA_PATTERN_MAX = 1000

_ROLE = ROLE_NAME_PATTERN.strip("^$")
_SEGMENT = r"(?:[A-Za-z0-9._~-]+|\{[a-z_][a-z0-9_]*\})"
# The part of a resource URI after ``<app>://``: literal segments and whole {variable} segments,
# the same shapes as a route's path (RFC 6570 level 1 expressions, one per segment).
RESOURCE_URI_PATTERN = rf"^{_SEGMENT}(?:/{_SEGMENT})*$"
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
        "isolation": {"$ref": "#/$defs/isolation"},
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
                },
                "resources": {
                    "type": "array",
                    "title": "Resources offered to MCP clients",
                    "description": (
                        "Bundle files, GET routes (a route with path parameters is a URI template) and "
                        "collections (one record per URI), each at <app name>://<uri> ('_' written '-')."
                    ),
                    "items": {"$ref": "#/$defs/resource"},
                },
                "prompts": {
                    "type": "array",
                    "title": "Prompts offered to MCP clients",
                    "items": {"$ref": "#/$defs/prompt"},
                },
            },
        },
        "screens": {
            "type": "object",
            "title": "Screens",
            "description": (
                "Screen name to an HTML file of the bundle (with the CSS, JavaScript and images it "
                "references), served on the app's front-end path and shown by tools as MCP Apps views."
            ),
            "propertyNames": {"pattern": SCREEN_NAME_PATTERN},
            "maxProperties": 50,
            "additionalProperties": {"$ref": "#/$defs/screen"},
        },
        "jobs": {
            "type": "object",
            "title": "Scheduled jobs",
            "description": "Job name to the internal route it calls, when, and as which roles.",
            "propertyNames": {"pattern": JOB_NAME_PATTERN},
            "additionalProperties": {"$ref": "#/$defs/job"},
        },
        "egress": {
            "type": "array",
            "title": "Where handlers may send requests (request.http)",
            "description": (
                "host (https on 443), *.domain (one label, https on 443) or scheme://host[:port]; "
                "nothing else is reachable. See docs/egress.md."
            ),
            "maxItems": 50,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": 300},
            "examples": [["api.github.com", "*.example.com", "http://127.0.0.1:8700"]],
        },
        "secrets": {
            "type": "array",
            "title": "Tenant secrets the handlers use (request.secret)",
            "maxItems": 50,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": r"^[A-Z][A-Z0-9_]{0,63}$"},
            "examples": [["CRM_API_KEY"]],
        },
        "connections": {
            "type": "object",
            "title": "Members' own accounts the handlers use (request.http(..., connection=name))",
            "description": "Name to the operator's OAuth provider and the scopes the app needs.",
            "maxProperties": 20,
            "propertyNames": {"pattern": r"^[a-z][a-z0-9_]{0,39}$"},
            "additionalProperties": {
                "type": "object",
                "required": ["provider"],
                "additionalProperties": False,
                "properties": {
                    "provider": {"type": "string", "minLength": 1, "maxLength": 64},
                    "scopes": {
                        "type": "array",
                        "maxItems": 50,
                        "items": {"type": "string", "maxLength": 200},
                    },
                },
            },
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
                "isolation": {"$ref": "#/$defs/isolation"},
                "description": {"type": "string"},
            },
        },
        "isolation": {
            "enum": ["version", "call"],
            "title": "What a handler's calls share",
            "default": "version",
            "description": (
                "version: calls of one app version may run in the same warm worker, so module globals "
                "persist between them (nothing else does); call: a fresh sandbox child for every call, "
                "sharing nothing. A route's setting wins over the app's."
            ),
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
                "approvers": {
                    "$ref": "#/$defs/authExpression",
                    "description": (
                        "Who may approve a confirm tool's call asked out of band (a client that cannot "
                        "be asked): default the caller (and tenant admins); a role rule such as "
                        "'role:case_manager' is four-eyes: the caller may not approve their own call."
                    ),
                },
                "approvalTtl": {
                    "type": "integer",
                    "minimum": APPROVAL_TTL_MIN,
                    "maximum": APPROVAL_TTL_MAX,
                    "description": (
                        "Seconds an out-of-band approval request of this confirm tool stays open, and "
                        "an approved call may come again to run once; default: the operator's "
                        "APPROVAL_TTL_SECONDS."
                    ),
                },
                "keywords": {
                    "type": "array",
                    "maxItems": TOOL_KEYWORDS_MAX,
                    "items": {"type": "string", "minLength": 1, "maxLength": TOOL_KEYWORD_MAX_CHARS},
                    "title": "Search keywords",
                    "description": (
                        "Words and short phrases users say for what this tool does (synonyms, jargon), "
                        "so search_tools finds it when a request shares no word with its description. "
                        "Never sent to clients."
                    ),
                    "examples": [["bill", "charge a customer", "dunning"]],
                },
                "pinned": {
                    "type": "boolean",
                    "default": False,
                    "description": (
                        "List this tool in tools/list even when the tenant's toolDiscovery setting is "
                        "search (where unpinned app tools are found with search_tools)."
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
                "ui": {
                    "type": "object",
                    "title": "The screen this tool shows (MCP Apps)",
                    "required": ["screen"],
                    "additionalProperties": False,
                    "properties": {
                        "screen": {"type": "string", "description": 'A key of "screens".'},
                        "visibility": {
                            "type": "array",
                            "minItems": 1,
                            "uniqueItems": True,
                            "items": {"enum": list(UI_VISIBILITY)},
                            "default": list(UI_VISIBILITY),
                            "description": (
                                '["model", "app"]: the model and the view may call it; ["app"]: hidden '
                                "from the model, callable only from a view (a client showing MCP Apps)."
                            ),
                        },
                        "requiresUiHost": {
                            "type": "boolean",
                            "default": False,
                            "description": (
                                "List the tool only to clients that show MCP Apps views (it still answers "
                                "a call by name with structured content and text)."
                            ),
                        },
                    },
                },
            },
        },
        "screen": {
            "type": "object",
            "title": "Screen",
            "required": ["file"],
            "additionalProperties": False,
            "properties": {
                "file": {
                    "type": "string",
                    "pattern": r"\.html?$",
                    "description": "Bundle-relative path of the screen's HTML file.",
                    "examples": ["screens/case_card.html"],
                },
                "title": {"type": "string", "maxLength": 200},
                "description": {"type": "string", "maxLength": TOOL_DESCRIPTION_MAX},
                "auth": {
                    "$ref": "#/$defs/authExpression",
                    "description": "Who may open it besides the app's access (default: user).",
                },
                "csp": {
                    "type": "object",
                    "title": "Origins the screen may reach (MCP Apps _meta.ui.csp)",
                    "additionalProperties": False,
                    "properties": {
                        key: {
                            "type": "array",
                            "maxItems": CSP_DOMAINS_MAX,
                            "uniqueItems": True,
                            "items": {"type": "string", "maxLength": 253},
                        }
                        for key in CSP_DOMAIN_KEYS
                    },
                },
                "permissions": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": {"enum": list(UI_PERMISSIONS)},
                    "description": "Browser features the view asks the host for.",
                },
                "prefersBorder": {"type": "boolean"},
            },
        },
        "completion": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "description": {"type": "string", "maxLength": TOOL_DESCRIPTION_MAX},
                "enum": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": ENUM_MAX_ITEMS,
                    "items": {"type": "string", "maxLength": 200},
                    "description": "The values offered when a client completes this argument.",
                },
                "complete": {
                    "type": "string",
                    "description": (
                        "A GET route that answers completion: it gets ?argument=<name>&value=<prefix> "
                        "(and the other arguments already given) and returns a list of strings."
                    ),
                },
            },
        },
        "resource": {
            "type": "object",
            "title": "MCP resource",
            "description": "Exactly one of file, route or collection says where the contents come from.",
            "required": ["name", "description"],
            "additionalProperties": False,
            "properties": {
                "name": {
                    "type": "string",
                    "pattern": RESOURCE_NAME_PATTERN,
                    "description": "Lowercase letters, digits and underscores, 1 to 40 characters.",
                },
                "title": {"type": "string", "maxLength": 200},
                "description": {"type": "string", "minLength": 1, "maxLength": TOOL_DESCRIPTION_MAX},
                "uri": {
                    "type": "string",
                    "pattern": RESOURCE_URI_PATTERN,
                    "maxLength": 300,
                    "description": (
                        "The URI after <app name>:// (default: the name, then one {variable} segment "
                        "per path parameter of the route, or {record_id} for a collection)."
                    ),
                },
                "mimeType": {"type": "string", "pattern": MIME_TYPE_PATTERN},
                "file": {"type": "string", "description": "A bundle file, served as it is."},
                "route": {
                    "type": "string",
                    "description": 'A GET route of the app, e.g. "GET /cases/{case_id}".',
                },
                "collection": {
                    "type": "string",
                    "description": "A collection of the app: one record per URI.",
                },
                "auth": {
                    "$ref": "#/$defs/authExpression",
                    "description": "For a file: who may read it besides the app's access (default: user).",
                },
                "variables": {
                    "type": "object",
                    "description": "Per URI variable: its description and how it is completed.",
                    "additionalProperties": {"$ref": "#/$defs/completion"},
                },
            },
        },
        "promptArgument": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": ARGUMENT_NAME_PATTERN},
                "title": {"type": "string", "maxLength": 200},
                "description": {"type": "string", "maxLength": TOOL_DESCRIPTION_MAX},
                "required": {"type": "boolean", "default": False},
                "enum": {"$ref": "#/$defs/completion/properties/enum"},
                "complete": {"$ref": "#/$defs/completion/properties/complete"},
            },
        },
        "promptMessage": {
            "type": "object",
            "description": "One message: exactly one of text ({argument} placeholders), resource, image.",
            "required": ["role"],
            "additionalProperties": False,
            "properties": {
                "role": {"enum": list(PROMPT_ROLES)},
                "text": {"type": "string", "maxLength": PROMPT_TEXT_MAX},
                "resource": {"type": "string", "description": "The name of a file resource of this app."},
                "image": {"type": "string", "description": "A PNG, JPEG, GIF or WebP file of the bundle."},
            },
        },
        "prompt": {
            "type": "object",
            "title": "MCP prompt",
            "description": "Exactly one of messages (a template) or route (a GET route returning messages).",
            "required": ["name", "description"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": PROMPT_NAME_PATTERN},
                "title": {"type": "string", "maxLength": 200},
                "description": {"type": "string", "minLength": 1, "maxLength": TOOL_DESCRIPTION_MAX},
                "arguments": {
                    "type": "array",
                    "maxItems": PROMPT_ARGUMENTS_MAX,
                    "items": {"$ref": "#/$defs/promptArgument"},
                },
                "messages": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": PROMPT_MESSAGES_MAX,
                    "items": {"$ref": "#/$defs/promptMessage"},
                },
                "route": {
                    "type": "string",
                    "description": "A GET route of the app that returns the messages.",
                },
                "auth": {
                    "$ref": "#/$defs/authExpression",
                    "description": "Template prompts: who may use it, besides app access (default: user).",
                },
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
