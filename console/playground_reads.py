"""The playground's resources and prompts: an app's, as the admin may list them, read and got as the admin.

Every read and get is the gateway's own (``read_resource``, ``get_prompt``: the caller's rules, the
argument checks, one audit row); a refusal is shown as the message a client's JSON-RPC error carries.
The answer is shown as a client gets it: the wire JSON, and each block laid out.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

import mcp.types as types

from mcp_gateway.exceptions import InternalError, RouteAnswerRefused, Unavailable
from mcp_gateway.tools.catalog.token_estimate import estimate_tokens
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.prompts.prompts import PromptEntry, get_prompt, visible_prompts
from mcp_gateway.tools.resources.resources import (
    ResourceEntry,
    read_resource,
    resource_catalog,
    visible_resources,
)
from tenants.callers import Caller
from tenants.models import Tenant

PREFIX = "arg:"
SHOWN_CHARS = 20_000  # a text block longer than this is shown cut (the wire JSON says how long)


@dataclass(frozen=True)
class Block:
    """One content block as the page shows it: a heading line and its text (or what it is)."""

    label: str
    text: str


@dataclass
class Answer:
    """A read or get: its blocks and wire JSON, or the refusal a client would get."""

    blocks: list[Block] = field(default_factory=list)
    wire: str = ""
    refused: str = ""
    description: str = ""


@dataclass(frozen=True)
class PromptArgument:
    name: str
    required: bool
    description: str
    choices: tuple[str, ...]
    value: str


def listing_of(entry: ResourceEntry | PromptEntry) -> tuple[str, int]:
    """The entry as resources/list (or templates/list, prompts/list) gives it, and its token estimate
    (counted as Preview as counts a list's items)."""
    listed = entry.listed if isinstance(entry, ResourceEntry) else entry.prompt
    wire = listed.model_dump(by_alias=True, mode="json", exclude_none=True)
    return json.dumps(wire, indent=2, ensure_ascii=False), estimate_tokens([wire])


def app_resources(tenant: Tenant, caller: Caller, app: str) -> list[ResourceEntry]:
    return [entry for entry in visible_resources(tenant, caller) if entry.app_name == app]


def app_prompts(tenant: Tenant, caller: Caller, app: str) -> list[PromptEntry]:
    return [entry for entry in visible_prompts(tenant, caller) if entry.app_name == app]


def prompt_arguments(entry: PromptEntry, posted: dict[str, str] | None) -> list[PromptArgument]:
    return [
        PromptArgument(
            name=name,
            required=bool(spec.get("required")),
            description=str(spec.get("description", "")),
            choices=tuple(str(choice) for choice in spec.get("enum", [])),
            value=(posted or {}).get(PREFIX + name, ""),
        )
        for name, spec in entry.arguments.items()
    ]


def _text(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}\n… (shown up to {SHOWN_CHARS:,} of {len(text):,} characters)"


def _blob_size(blob: str) -> int:
    try:
        return len(base64.b64decode(blob, validate=True))
    except (binascii.Error, ValueError):
        return 0


def _contents_block(contents: types.TextResourceContents | types.BlobResourceContents) -> Block:
    mime = contents.mime_type or "no mimeType"
    if isinstance(contents, types.TextResourceContents):
        return Block(f"{contents.uri} ({mime})", _text(contents.text))
    return Block(f"{contents.uri} ({mime})", f"binary, {_blob_size(contents.blob):,} bytes (base64 in blob)")


def _wire(result: types.Result) -> str:
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return _text(json.dumps(wire, indent=2, ensure_ascii=False))


def read_as(tenant: Tenant, caller: Caller, app: str, uri: str) -> Answer:
    """``resources/read`` of ``uri`` as ``caller``, if ``uri`` is one of ``app``'s resources."""
    if resource_catalog(tenant).owner(uri) != app:
        return Answer(refused=f"{uri[:300]} is not a resource of {app}: pick one above, or fill its template")
    try:
        result = read_resource(CallContext(tenant, caller), uri)
    except (Unavailable, RouteAnswerRefused, InternalError) as err:
        return Answer(refused=str(err))
    return Answer(blocks=[_contents_block(c) for c in result.contents], wire=_wire(result))


def _message_block(message: types.PromptMessage) -> Block:
    content = message.content
    if isinstance(content, types.TextContent):
        return Block(f"{message.role}: text", _text(content.text))
    if isinstance(content, types.EmbeddedResource):
        inner = _contents_block(content.resource)
        return Block(f"{message.role}: resource {inner.label}", inner.text)
    if isinstance(content, types.ResourceLink):
        return Block(f"{message.role}: resource link", str(content.uri))
    kind = getattr(content, "type", "content")
    return Block(f"{message.role}: {kind}", f"{getattr(content, 'mime_type', '') or ''} (not shown here)")


def get_as(tenant: Tenant, caller: Caller, entry: PromptEntry, arguments: list[PromptArgument]) -> Answer:
    """``prompts/get`` of ``entry`` as ``caller``; an empty field is an argument left out."""
    given = {argument.name: argument.value for argument in arguments if argument.value != ""}
    try:
        result = get_prompt(CallContext(tenant, caller), entry.wire_name, given)
    except (Unavailable, RouteAnswerRefused, InternalError) as err:
        return Answer(refused=str(err))
    if isinstance(result, Asked):
        return Answer(
            refused="The prompt's handler asked its caller a question, which the playground cannot answer."
        )
    return Answer(
        blocks=[_message_block(m) for m in result.messages],
        wire=_wire(result),
        description=result.description or "",
    )
