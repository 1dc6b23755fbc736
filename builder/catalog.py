"""The builder endpoint's tools, resources and prompt: what an agent reads before it builds an app."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import mcp.types as types

from builder import operations

_BUNDLE = {
    "manifest": {"type": "object", "description": "The app's app.json, as a JSON object."},
    "files": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": 'Every other file of the app, path -> text: {"server/items/list.py": "..."}.',
    },
}
_APP = {"app": {"type": "string", "description": "The app's name (its manifest's name)."}}


@dataclass(frozen=True)
class BuilderTool:
    tool: types.Tool
    run: Callable[..., dict]


def _tool(
    name: str, title: str, description: str, properties: dict, required: list[str], run, **hints
) -> BuilderTool:
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    annotations = types.ToolAnnotations(**hints) if hints else None
    return BuilderTool(
        types.Tool(
            name=name, title=title, description=description, input_schema=schema, annotations=annotations
        ),
        run,
    )


TOOLS = {
    entry.tool.name: entry
    for entry in (
        _tool(
            "validate_app",
            "Validate an app",
            "Check an app bundle exactly as a deploy would, deploying nothing. Use it before deploy_app and "
            "after every change: it answers every problem at once as {pointer, message}, the pointer being "
            "where in app.json to fix it, plus warnings and the wire name each tool would get.",
            _BUNDLE,
            ["manifest", "files"],
            operations.validate_app,
            readOnlyHint=True,
            destructiveHint=False,
        ),
        _tool(
            "deploy_app",
            "Deploy an app",
            "Deploy an app bundle as the new version of its app and switch to it at once (a new app is "
            "created). Validate first. Refused with every problem ({pointer, message}) when it is not "
            "valid; the previous version keeps serving. Returns the version and each tool's wire name.",
            _BUNDLE,
            ["manifest", "files"],
            operations.deploy_app,
            readOnlyHint=False,
            destructiveHint=False,
        ),
        _tool(
            "list_apps",
            "List apps",
            "The tenant's apps, each with its active version (null: undeployed) and its tools' wire names.",
            {},
            [],
            operations.list_apps,
            readOnlyHint=True,
        ),
        _tool(
            "get_app",
            "Get an app's source",
            "An app version's manifest and files (default: the active version), to read before changing it.",
            {
                **_APP,
                "version": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "A version number; default active",
                },
            },
            ["app"],
            operations.get_app,
            readOnlyHint=True,
        ),
        _tool(
            "rollback_app",
            "Roll an app back",
            "Switch an app back to the version before its active one, at once: the quick way out of a "
            "deploy that broke something. Fix the bundle and deploy again afterwards.",
            _APP,
            ["app"],
            operations.rollback,
            readOnlyHint=False,
            destructiveHint=False,
        ),
        _tool(
            "undeploy_app",
            "Undeploy an app",
            "Stop serving an app: its routes and tools go away; its versions and records are kept, and a "
            "deploy brings it back. Only when the person asked for it.",
            _APP,
            ["app"],
            operations.undeploy,
            readOnlyHint=False,
            destructiveHint=True,
        ),
        _tool(
            "list_errors",
            "List handler errors",
            "The tenant's newest handler errors (a failed call answers its caller an error id, err_...): "
            "id, app, version, route, caller, time. get_error gives one error's traceback.",
            {
                "app": {"type": "string", "description": "Only this app's errors"},
                "limit": {"type": "integer", "minimum": 1, "maximum": operations.ERRORS_LIMIT_MAX},
            },
            [],
            operations.list_errors,
            readOnlyHint=True,
        ),
        _tool(
            "get_error",
            "Get a handler error",
            "One handler error by its id: the traceback (frames of the app's own files only) and the "
            "handler's print/log output. Read it to find the line to fix.",
            {"errorId": {"type": "string", "description": "The error id, err_..."}},
            ["errorId"],
            operations.get_error,
            readOnlyHint=True,
        ),
        _tool(
            "preview_tools",
            "Preview tools as roles",
            "The tools/list a member holding exactly these roles would get from the tenant's MCP endpoint, "
            "with its size in tokens: check that each person sees the tools meant for them.",
            {
                "roles": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Role names; [] for none",
                }
            },
            [],
            operations.preview_tools,
            readOnlyHint=True,
        ),
    )
}

SCHEMA_URI = "builder://manifest-schema"
CONTRACT_URI = "builder://handler-contract"
GUIDE_URI = "builder://agent-guide"


def resource_text(uri: str) -> tuple[str, str] | None:
    """(MIME type, text) of a builder resource, or None for an unknown URI."""
    if uri == SCHEMA_URI:
        return "application/schema+json", json.dumps(operations.manifest_schema(), indent=2)
    files = {CONTRACT_URI: "handler_contract.md", GUIDE_URI: "agent_guide.md"}
    if uri in files:
        return "text/markdown", (resources.files("builder") / "resources" / files[uri]).read_text("utf-8")
    return None


RESOURCES = [
    types.Resource(
        uri=SCHEMA_URI,
        name="manifest-schema",
        title="app.json JSON Schema",
        description="The JSON Schema of app.json (the deploy validator checks more: use validate_app).",
        mime_type="application/schema+json",
    ),
    types.Resource(
        uri=CONTRACT_URI,
        name="handler-contract",
        title="The handler contract",
        description="What a route's handler receives (request) and may return; records, errors, limits.",
        mime_type="text/markdown",
    ),
    types.Resource(
        uri=GUIDE_URI,
        name="agent-guide",
        title="Building apps: a guide for agents",
        description="The validate-deploy-diagnose loop and how to write tools models use well.",
        mime_type="text/markdown",
    ),
]

CREATE_PROMPT = types.Prompt(
    name="create_app",
    title="Create an app that ...",
    description="Build, validate and deploy a new app from a description of what it should do.",
    arguments=[types.PromptArgument(name="purpose", description="What the app should do", required=True)],
)


def create_prompt(purpose: str) -> types.GetPromptResult:
    text = (
        f"Create an app on this platform that {purpose.strip()}.\n\n"
        f"Read {GUIDE_URI} and {CONTRACT_URI} first, and {SCHEMA_URI} for app.json. Call list_apps to "
        "pick an unused app name. Write app.json and the handler files, call validate_app and fix every "
        "problem it lists (each names the JSON pointer to change), then deploy_app. Check the tools "
        "with preview_tools for the roles that will use them, and tell me each tool's wire name."
    )
    return types.GetPromptResult(
        description=CREATE_PROMPT.description,
        messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
    )
