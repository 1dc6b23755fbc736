"""Explicit MCP content from a handler: ``{"content": [...]}`` checked and mapped to SDK content blocks.

A route's body is explicit content when it is an object with a ``content`` key (and at most a
``structuredContent`` key beside it) whose value is a non-empty list of objects that each have a
string ``type``: what ``platform_sdk.text``/``image``/``audio``/``resource_link``/``embedded_resource``
build. Anything else is plain
JSON (``results.json_result``), so a record that merely has a ``content`` field is unaffected.

The items come from the sandbox: untrusted. Each is checked for its type and keys, its size (text
bytes, decoded image and audio bytes, a link's JSON, an embedded resource's text or decoded blob)
against a per-item and a total bound, the item count, images and audio against their MIME allow-list
and their format's signature, links against a path of the app, and an embedded resource's URI
against the URI syntax (never ``ui://``: screens are only what the manifest declares; never a URI
another app of the tenant serves, so no app speaks for another's resources). The first
problem refuses the whole result, naming the item and the bound.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from django.conf import settings

from apps_runtime.handler_contract import AUDIO_MIME_TYPES, IMAGE_MIME_TYPES
from mcp_gateway.tools.catalog.token_estimate import json_bytes

CONTENT = "content"
STRUCTURED = "structuredContent"
# The first bytes of each allowed format: an image labelled PNG that is HTML is refused.
_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
    "audio/wav": (b"RIFF",),
    "audio/mpeg": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"),
    "audio/ogg": (b"OggS",),
    "audio/flac": (b"fLaC",),
}
# RIFF containers name their format in bytes 8-12.
_RIFF_FORMATS = {"image/webp": b"WEBP", "audio/wav": b"WAVE"}
_ITEM_KEYS = {
    "text": ({"type", "text"}, {"type", "text"}),
    "image": ({"type", "data", "mimeType"}, {"type", "data", "mimeType"}),
    "audio": ({"type", "data", "mimeType"}, {"type", "data", "mimeType"}),
    "resource": ({"type", "resource"}, {"type", "resource"}),
    "resource_link": (
        {"type", "route", "name"},
        {"type", "route", "name", "title", "description", "mimeType"},
    ),
}
_SEGMENT = r"[A-Za-z0-9._~%!$&'()*+,;=:@-]+"
_ROUTE_PATH = re.compile(rf"^(?:/|(?:/{_SEGMENT})+/?)(?:\?[A-Za-z0-9._~%!$&'()*+,;=:@/?-]*)?$")
_MIME_TYPE = re.compile(r"^[A-Za-z0-9.+-]{1,64}/[A-Za-z0-9.+-]{1,64}$")
_ROUTE_MAX = 2000
_LINK_TEXT_MAX = {"name": 200, "title": 200, "description": 2000}
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,31}:[^\s\x00-\x1f\x7f]{1,2000}$")
_EMBEDDED_KEYS = ({"uri"}, {"uri", "mimeType", "text", "blob"})

ContentBlock = (
    types.TextContent | types.ImageContent | types.AudioContent | types.ResourceLink | types.EmbeddedResource
)
# Blocks a model does not read as text: they do not count towards the output budget.
_MEDIA = (types.ImageContent, types.AudioContent)


@dataclass(frozen=True)
class ContentLimits:
    max_items: int
    max_item_bytes: int
    max_total_bytes: int

    @classmethod
    def from_settings(cls) -> ContentLimits:
        return cls(
            settings.MCP_CONTENT_MAX_ITEMS,
            settings.MCP_CONTENT_MAX_ITEM_BYTES,
            settings.MCP_CONTENT_MAX_BYTES,
        )


@dataclass(frozen=True)
class ContentOrigin:
    """The app a handler's content comes from, and who serves a URI (an app name, or None)."""

    app_name: str
    uri_owner: Callable[[str], str | None]


@dataclass(frozen=True)
class MappedContent:
    """The checked blocks, and the bytes a model reads of them (text and links; images aside)."""

    blocks: list[ContentBlock]
    readable_bytes: int


class ContentRefused(Exception):
    """Content a handler returned that breaks a rule; names the item and the rule."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"The tool returned content the platform refuses: {where}: {problem}.")


def is_explicit_content(body: Any) -> bool:
    """Whether a route's body asks for explicit content (see the module docstring)."""
    if not isinstance(body, dict) or CONTENT not in body or not set(body) <= {CONTENT, STRUCTURED}:
        return False
    items = body[CONTENT]
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(item, dict) and isinstance(item.get("type"), str) for item in items)
    )


def map_content(
    items: list[dict],
    link_url: Callable[[str], str],
    limits: ContentLimits,
    *,
    origin: ContentOrigin | None = None,
) -> MappedContent:
    """Check every item and map it to its SDK block.

    ``link_url`` turns a route path of the app into its absolute URL; ``origin`` says which app the
    content comes from and who serves a URI (None: embedded resources may not name served URIs).

    Raises:
        ContentRefused: the first item (or the whole) that breaks a rule.
    """
    if len(items) > limits.max_items:
        raise ContentRefused(CONTENT, f"{len(items)} items, over the limit of {limits.max_items}")
    blocks: list[ContentBlock] = []
    total = readable = 0
    for index, item in enumerate(items):
        where = f"{CONTENT}[{index}]"
        _check_keys(item, where)
        block, size = _MAPPERS[item["type"]](item, where, limits, link_url)
        if isinstance(block, types.EmbeddedResource):
            _check_own_uri(str(block.resource.uri), f"{where}.resource", origin)
        if size > limits.max_item_bytes:
            raise ContentRefused(
                where, f"{size:,} bytes, over the limit of {limits.max_item_bytes:,} bytes per item"
            )
        total += size
        if total > limits.max_total_bytes:
            raise ContentRefused(
                CONTENT,
                f"at least {total:,} bytes, over the limit of {limits.max_total_bytes:,} bytes in all",
            )
        readable += 0 if isinstance(block, _MEDIA) else size
        blocks.append(block)
    return MappedContent(blocks, readable)


def _check_keys(item: dict, where: str) -> None:
    kind = item["type"]
    if kind not in _ITEM_KEYS:
        raise ContentRefused(where, f"type {kind[:40]!r} is not allowed: use {', '.join(_ITEM_KEYS)}")
    required, allowed = _ITEM_KEYS[kind]
    missing, unknown = sorted(required - set(item)), sorted(set(item) - allowed)
    if missing:
        raise ContentRefused(where, f"{kind} items need {', '.join(missing)}")
    if unknown:
        raise ContentRefused(where, f"{kind} items take no key {unknown[0][:40]!r}")
    for key, value in item.items():
        if not isinstance(value, str) and key != "resource":
            raise ContentRefused(where, f"{key} must be a string")


def _text(item: dict, where: str, limits: ContentLimits, link_url: Any) -> tuple[ContentBlock, int]:
    return types.TextContent(type="text", text=item["text"]), len(item["text"].encode("utf-8"))


def _image(item: dict, where: str, limits: ContentLimits, link_url: Any) -> tuple[ContentBlock, int]:
    data, size = _media_data(item, where, limits, IMAGE_MIME_TYPES, "image")
    return types.ImageContent(type="image", data=data, mime_type=item["mimeType"]), size


def _audio(item: dict, where: str, limits: ContentLimits, link_url: Any) -> tuple[ContentBlock, int]:
    data, size = _media_data(item, where, limits, AUDIO_MIME_TYPES, "audio")
    return types.AudioContent(type="audio", data=data, mime_type=item["mimeType"]), size


def _media_data(
    item: dict, where: str, limits: ContentLimits, allowed: tuple[str, ...], kind: str
) -> tuple[str, int]:
    """The item's base64 ``data`` and its decoded size, once its MIME type and signature check out."""
    mime_type, data = item["mimeType"], item["data"]
    if mime_type not in allowed:
        raise ContentRefused(where, f"mimeType {mime_type[:60]!r} is not allowed: use {', '.join(allowed)}")
    raw = _decoded(data, where, limits)
    riff = _RIFF_FORMATS.get(mime_type)
    if not raw.startswith(_SIGNATURES[mime_type]) or (riff is not None and raw[8:12] != riff):
        raise ContentRefused(where, f"data is not {kind} of type {mime_type}")
    return data, len(raw)


def _decoded(data: str, where: str, limits: ContentLimits) -> bytes:
    """Base64 ``data`` decoded, refused before decoding when it would be over the per-item bound."""
    decoded_size = len(data) * 3 // 4
    if decoded_size > limits.max_item_bytes:
        raise ContentRefused(
            where, f"about {decoded_size:,} bytes, over the limit of {limits.max_item_bytes:,} bytes per item"
        )
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ContentRefused(where, "data is not valid base64") from None


def _embedded(item: dict, where: str, limits: ContentLimits, link_url: Any) -> tuple[ContentBlock, int]:
    """An embedded resource: a URI with its ``text`` or base64 ``blob`` (exactly one)."""
    resource = item["resource"]
    where = f"{where}.resource"
    if not isinstance(resource, dict):
        raise ContentRefused(where, "must be an object")
    required, allowed = _EMBEDDED_KEYS
    unknown = sorted(set(resource) - allowed)
    if unknown:
        raise ContentRefused(where, f"takes no key {unknown[0][:40]!r}")
    if not required <= set(resource) or len({"text", "blob"} & set(resource)) != 1:
        raise ContentRefused(where, "needs a uri and exactly one of text or blob")
    for key, value in resource.items():
        if not isinstance(value, str):
            raise ContentRefused(where, f"{key} must be a string")
    uri, mime_type = resource["uri"], resource.get("mimeType")
    if not _URI.match(uri) or uri[:3].lower() == "ui:":
        raise ContentRefused(
            where, f"uri {uri[:60]!r} is not an absolute URI (ui:// is for declared screens)"
        )
    if mime_type is not None and not _MIME_TYPE.match(mime_type):
        raise ContentRefused(where, f"mimeType {mime_type[:60]!r} is not a MIME type")
    contents: types.TextResourceContents | types.BlobResourceContents
    if "text" in resource:
        contents = types.TextResourceContents(uri=uri, mime_type=mime_type, text=resource["text"])
        size = len(resource["text"].encode("utf-8"))
    else:
        raw = _decoded(resource["blob"], where, limits)
        contents = types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=resource["blob"])
        size = len(raw)
    return types.EmbeddedResource(type="resource", resource=contents), size + len(uri)


def _check_own_uri(uri: str, where: str, origin: ContentOrigin | None) -> None:
    if origin is None:
        return
    owner = origin.uri_owner(uri)
    if owner is not None and owner != origin.app_name:
        raise ContentRefused(where, f"uri {uri[:60]!r} is another app's resource: an app embeds only its own")


def _resource_link(
    item: dict, where: str, limits: ContentLimits, link_url: Callable[[str], str]
) -> tuple[ContentBlock, int]:
    route = item["route"]
    segments = route.partition("?")[0].split("/")
    if len(route) > _ROUTE_MAX or not _ROUTE_PATH.match(route) or {".", ".."} & set(segments):
        raise ContentRefused(where, f"route {route[:60]!r} is not a path of this app, like /cases/42")
    for key, most in _LINK_TEXT_MAX.items():
        if key in item and not 0 < len(item[key]) <= most:
            raise ContentRefused(where, f"{key} must be 1 to {most} characters")
    if "mimeType" in item and not _MIME_TYPE.match(item["mimeType"]):
        raise ContentRefused(where, f"mimeType {item['mimeType'][:60]!r} is not a MIME type")
    block = types.ResourceLink(
        type="resource_link",
        uri=link_url(route),
        name=item["name"],
        title=item.get("title"),
        description=item.get("description"),
        mime_type=item.get("mimeType"),
    )
    return block, json_bytes(item)


_MAPPERS = {
    "text": _text,
    "image": _image,
    "audio": _audio,
    "resource_link": _resource_link,
    "resource": _embedded,
}
