"""Opaque list cursors: a kind and a non-negative integer, base64 so clients do not parse them."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypeVar

from django.conf import settings

from mcp_gateway.exceptions import InvalidCursor

T = TypeVar("T")
# How long a client may keep a caller-dependent list (cacheScope "private"): a deploy or a role
# change is announced by list_changed, so a minute of staleness is the bound without notifications.
LIST_TTL_MS = 60_000


def encode_cursor(kind: str, value: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode()


def decode_cursor(kind: str, cursor: str) -> int:
    """The integer of a cursor of ``kind``.

    Raises:
        InvalidCursor: a cursor this server did not issue, or one of another kind.
    """
    try:
        found, _, text = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        value = int(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise InvalidCursor() from err
    if found != kind or value < 0:
        raise InvalidCursor()
    return value


def page_of(items: Sequence[T], kind: str, cursor: str | None) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` (MCP_PAGE_SIZE long) from ``cursor``, and the next page's cursor.

    Raises:
        InvalidCursor: a cursor this server did not issue, or one of another kind.
    """
    start = decode_cursor(kind, cursor) if cursor else 0
    size = settings.MCP_PAGE_SIZE
    next_cursor = encode_cursor(kind, start + size) if start + size < len(items) else None
    return items[start : start + size], next_cursor
