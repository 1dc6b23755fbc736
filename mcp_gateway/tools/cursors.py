"""Opaque list cursors: a kind and a non-negative integer, base64 so clients do not parse them."""

from __future__ import annotations

import base64

from mcp_gateway.exceptions import InvalidCursor


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
