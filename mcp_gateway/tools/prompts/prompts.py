"""App prompts for one caller: prompts/list and prompts/get, run as the caller and audited.

A prompt is a template of the manifest (messages with ``{argument}`` placeholders, embedded file
resources of the app, images of the bundle) or a GET route that returns the messages, run exactly
as the front-end would run it. Arguments are checked against the declaration (known, required,
strings, one of the ``enum``) before anything runs. Who sees a prompt: the app's access and the
prompt's own rule (a template's ``auth``, a route prompt's route auth), and for a template every
resource it embeds; the ``customAppsMcpTools`` switch governs app prompts as it does app tools.
"""

from __future__ import annotations

import base64
import functools
import mimetypes
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types

from apps_runtime.auth_expr import AuthExpr, parse_auth
from apps_runtime.bundles import bundle_dir
from apps_runtime.deploy import active_manifests, prompt_wire_names
from apps_runtime.dispatch import load_app, may_use_route
from apps_runtime.manifest import defaults
from apps_runtime.manifest.schema import PROMPT_ROLES
from core.caches import BoundedCache
from mcp_gateway.exceptions import InvalidPromptArguments, PromptUnavailable, RouteFailed
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.catalog.catalog import caller_view, catalog_for
from mcp_gateway.tools.catalog.cursors import LIST_TTL_MS, page_of
from mcp_gateway.tools.pipeline.asks import Asked, HandlerAsked
from mcp_gateway.tools.pipeline.audit import audited_call
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.links import app_route_url
from mcp_gateway.tools.pipeline.rich_content import ContentLimits, ContentOrigin, ContentRefused, map_content
from mcp_gateway.tools.resources.resources import ReadRequest, ResourceEntry, resource_catalog, run_read_route
from tenants.callers import Caller
from tenants.models import Tenant

Outcome = ToolCallAudit.Outcome
APP_PROMPTS_OFF = "App resources and prompts are switched off for this tenant (setting customAppsMcpTools)."
# An argument value longer than this is refused: it bounds the text a template can make.
ARGUMENT_MAX_CHARS = 10_000
MESSAGES_MAX = 50


@dataclass(frozen=True)
class PromptEntry:
    """One prompt of one app."""

    app_name: str
    wire_name: str
    prompt: types.Prompt
    access: AuthExpr
    auth: AuthExpr
    spec: dict = field(repr=False)
    embeds: tuple[ResourceEntry, ...] = ()  # the file resources a template embeds

    def visible_to(self, caller: Caller) -> bool:
        """A prompt only reads (a template, or a GET route), so read-only tokens see it too."""
        return (
            caller.carries(self.app_name, True)
            and may_use_route(self.access, self.auth, caller)
            and all(r.visible_to(caller) for r in self.embeds)
        )

    @functools.cached_property
    def arguments(self) -> dict[str, dict]:
        return {a["name"]: a for a in self.spec.get("arguments") or []}


def _app_prompts(
    tenant: Tenant, app_name: str, manifest: dict, files: dict[str, ResourceEntry]
) -> list[PromptEntry]:
    access = parse_auth(defaults.app_access(manifest))
    routes = manifest.get("routes") or {}
    entries = []
    specs = manifest["mcp"]["prompts"]
    for index, wire in prompt_wire_names(tenant, app_name, manifest):
        spec = specs[index]
        if "route" in spec:
            auth = parse_auth(routes[spec["route"]]["auth"])
        else:
            auth = parse_auth(spec.get("auth", defaults.DEFAULT_ACCESS))
        embeds = tuple(files[m["resource"]] for m in spec.get("messages") or [] if "resource" in m)
        arguments = [
            types.PromptArgument(
                name=a["name"], description=a.get("description"), required=a.get("required", False)
            )
            for a in spec.get("arguments") or []
        ]
        prompt = types.Prompt(
            name=wire, title=spec.get("title"), description=spec["description"], arguments=arguments or None
        )
        entries.append(PromptEntry(app_name, wire, prompt, access, auth, spec, embeds))
    return entries


@dataclass
class PromptCatalog:
    entries: list[PromptEntry]
    by_name: dict[str, PromptEntry] = field(init=False)
    _views: BoundedCache[tuple, list[PromptEntry]] = field(
        default_factory=lambda: BoundedCache(256), init=False, repr=False
    )

    def visible(self, caller: Caller) -> list[PromptEntry]:
        """The prompts ``caller`` may use, kept per view (role combinations are few)."""
        return caller_view(self._views, self.entries, caller)

    def __post_init__(self) -> None:
        self.by_name = {e.wire_name: e for e in self.entries}


def build_prompts(tenant: Tenant) -> PromptCatalog:
    """Every prompt of the tenant's deployed apps, by app name, then manifest order."""
    resources = resource_catalog(tenant)
    entries: list[PromptEntry] = []
    for app_name, manifest in active_manifests(tenant):
        if (manifest.get("mcp") or {}).get("prompts"):
            files = {e.name: e for e in resources.by_app.get(app_name, []) if e.kind == "file"}
            entries += _app_prompts(tenant, app_name, manifest, files)
    return PromptCatalog(entries)


def prompt_catalog(tenant: Tenant) -> PromptCatalog:
    return catalog_for(tenant).derived("prompts", lambda: build_prompts(tenant))


def visible_prompts(tenant: Tenant, caller: Caller) -> list[PromptEntry]:
    if not tenant.setting("customAppsMcpTools"):
        return []
    return prompt_catalog(tenant).visible(caller)


def list_prompts(tenant: Tenant, caller: Caller, cursor: str | None) -> types.ListPromptsResult:
    """One page of the caller's prompts (private to the caller).

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    page, next_cursor = page_of(visible_prompts(tenant, caller), "p", cursor)
    return types.ListPromptsResult(
        prompts=[e.prompt for e in page], next_cursor=next_cursor, ttl_ms=LIST_TTL_MS, cache_scope="private"
    )


def resolve_prompt(tenant: Tenant, caller: Caller, name: str) -> PromptEntry:
    """The prompt ``name`` if the caller may use it now.

    Raises:
        PromptUnavailable: unknown, hidden from this caller, or app prompts switched off.
    """
    entry = prompt_catalog(tenant).by_name.get(name)
    if entry is None or not entry.visible_to(caller):
        raise PromptUnavailable(name)
    if not tenant.setting("customAppsMcpTools"):
        raise PromptUnavailable(name, f"Unknown prompt: {name[:200]}. {APP_PROMPTS_OFF}")
    return entry


def argument_problems(entry: PromptEntry, arguments: dict[str, Any]) -> list[str]:
    """What is wrong with ``arguments`` for ``entry``, one line per problem (empty: fine)."""
    declared = entry.arguments
    problems = [f"unknown argument {name[:40]!r}" for name in sorted(arguments) if name not in declared]
    for name, spec in declared.items():
        value = arguments.get(name)
        if value is None:
            if spec.get("required"):
                problems.append(f"missing required argument {name!r}")
        elif not isinstance(value, str):
            problems.append(f"argument {name!r} must be a string")
        elif len(value) > ARGUMENT_MAX_CHARS:
            problems.append(f"argument {name!r} is over {ARGUMENT_MAX_CHARS:,} characters")
        elif "enum" in spec and value not in spec["enum"]:
            problems.append(f"argument {name!r} must be one of {', '.join(spec['enum'])}")
    return problems


def get_prompt(
    call: CallContext,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    answers: dict[str, dict] | None = None,
) -> types.GetPromptResult | Asked:
    """The prompt's messages for ``arguments``, made as the caller; one audit row (prompts/get).

    A route prompt's handler may ask its caller (``request.ask``, as a tool's does): then its checked
    questions are returned (``Asked``, audited ``input_required``) with ``answers`` the answers so far.

    Raises:
        PromptUnavailable: see ``resolve_prompt``.
        InvalidPromptArguments: the arguments do not fit the declaration; nothing ran.
        RouteAnswerRefused: a route prompt's route answered an error, failed, or returned messages
            the platform refuses.
        InternalError: the platform failed; logged under the error id.
    """
    arguments = arguments or {}
    with audited_call(call, name[:128], arguments, method="prompts/get") as audit:
        entry = resolve_prompt(call.tenant, call.caller, name)
        audit.app(entry.app_name)
        problems = argument_problems(entry, arguments)
        if problems:
            audit.refused(Outcome.INVALID_ARGUMENTS)
            raise InvalidPromptArguments(problems)
        request = ReadRequest(call, f"prompt:{name}", {}, audit)
        if "route" in entry.spec:
            try:
                return _route_prompt(entry, request, arguments, answers, call.can_ask)
            except HandlerAsked as asked:
                return asked.asked
        return _template_prompt(entry, request, arguments)


def _template_prompt(
    entry: PromptEntry, req: ReadRequest, arguments: dict[str, str]
) -> types.GetPromptResult:
    loaded = load_app(req.tenant, entry.app_name)
    req.audit.ran(loaded.app.name, loaded.version.number)
    values = defaultdict(str, arguments)  # an optional argument not given reads as ""
    resources = {e.name: e for e in entry.embeds}
    messages = []
    for message in entry.spec["messages"]:
        if "text" in message:
            # Placeholders are plain names (checked at deploy), so format_map only substitutes.
            content: Any = types.TextContent(type="text", text=message["text"].format_map(values))
        elif "resource" in message:
            resource = resources[message["resource"]]
            read = ReadRequest(req.call, resource.pattern.uri, {}, req.audit)
            (contents,) = resource.reader(resource, read)
            content = types.EmbeddedResource(type="resource", resource=contents)
        else:
            data = (bundle_dir(loaded.version) / message["image"]).read_bytes()
            mime = mimetypes.guess_type(message["image"], strict=False)[0]
            if mime is None:  # deploy accepts images of known types only
                raise ValueError(f"prompt image {message['image']!r} has no known MIME type")
            content = types.ImageContent(
                type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime
            )
        messages.append(types.PromptMessage(role=message["role"], content=content))
    req.audit.ended(Outcome.OK)
    return types.GetPromptResult(description=entry.prompt.description, messages=messages)


def _route_prompt(
    entry: PromptEntry,
    req: ReadRequest,
    arguments: dict[str, str],
    answers: dict[str, dict] | None,
    can_ask: tuple[str, ...],
) -> types.GetPromptResult:
    """Run the prompt's route with the arguments as its query; its body is ``{"messages": [...]}``
    (and an optional ``description``), each message ``{"role", "content": <one content item>}``,
    content items checked as a tool's explicit content is."""
    body = run_read_route(
        req,
        entry.app_name,
        entry.spec["route"],
        query=arguments,
        is_resource=False,
        answers=answers,
        can_ask=can_ask,
    )
    try:
        return _route_messages(entry, req, body)
    except ContentRefused as err:
        req.audit.ended(Outcome.TOOL_ERROR)
        message = f"The prompt's route returned messages the platform refuses: {err.where}: {err.problem}."
        raise RouteFailed(message) from err


def _route_messages(entry: PromptEntry, req: ReadRequest, body: Any) -> types.GetPromptResult:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages or len(messages) > MESSAGES_MAX:
        raise ContentRefused("messages", f"must be a list of 1 to {MESSAGES_MAX} messages")
    items = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in PROMPT_ROLES:
            raise ContentRefused(f"messages[{index}]", "needs a role, user or assistant")
        content = message.get("content")
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            raise ContentRefused(f"messages[{index}].content", "must be one content item, e.g. text(...)")
        items.append(content)
    links = functools.partial(app_route_url, req.tenant.slug, entry.app_name)
    origin = ContentOrigin(entry.app_name, resource_catalog(req.tenant).owner)
    mapped = map_content(items, links, ContentLimits.from_settings(), origin=origin)
    description = body.get("description")
    description = description if isinstance(description, str) else entry.prompt.description
    return types.GetPromptResult(
        description=description[:2000] if description is not None else None,
        messages=[
            types.PromptMessage(role=message["role"], content=block)
            for message, block in zip(messages, mapped.blocks, strict=True)
        ],
    )
