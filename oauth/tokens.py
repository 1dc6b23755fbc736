"""Access and refresh token values: recognisable prefixes, 256 random bits.

The prefixes let people and secret scanners recognise a leaked token, and let the MCP endpoint
tell an OAuth access token from a static API token (``lcp_``) without a lookup.
"""

from __future__ import annotations

import secrets

ACCESS_PREFIX = "lcpo_"
REFRESH_PREFIX = "lcpr_"


def access_token(request: object) -> str:
    """A new access token (the toolkit's ACCESS_TOKEN_GENERATOR; ``request`` is unused)."""
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def refresh_token(request: object) -> str:
    """A new refresh token (the toolkit's REFRESH_TOKEN_GENERATOR)."""
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


def is_access_token(raw: str) -> bool:
    return raw.startswith(ACCESS_PREFIX)
