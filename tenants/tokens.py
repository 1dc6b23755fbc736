"""API token secrets: generate, hash, parse and verify.

A token looks like ``lcp_<key id>_<secret>``. The ``lcp_`` prefix lets people and secret
scanners recognise a leaked token; the key id finds the row; only a SHA-256 of the secret is
stored, which is enough for a 256-bit random secret (no slow hash needed, unlike passwords).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone

from tenants.exceptions import InvalidToken
from tenants.models import ApiToken

TOKEN_PREFIX = "lcp_"
# Only write last_used_at this often: a write per request would serialise hot paths on one row.
LAST_USED_RESOLUTION = timedelta(seconds=60)
# The longest lifetime a token may be issued with (ten years); beyond it dates overflow, and a
# token meant to live for ever is issued without an expiry instead.
TOKEN_MAX_DAYS = 3650


@dataclass(frozen=True)
class NewSecret:
    key_id: str
    secret: str

    @property
    def token(self) -> str:
        return f"{TOKEN_PREFIX}{self.key_id}_{self.secret}"


def new_secret() -> NewSecret:
    # token_hex for the key id keeps "_" (our separator) out of it.
    return NewSecret(key_id=secrets.token_hex(6), secret=secrets.token_urlsafe(32))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_token(raw: str) -> tuple[str, str]:
    """Split a raw token into (key id, secret).

    Raises:
        InvalidToken: the token is not of our shape.
    """
    if not raw.startswith(TOKEN_PREFIX):
        raise InvalidToken("malformed")
    key_id, sep, secret = raw[len(TOKEN_PREFIX) :].partition("_")
    if not sep or not key_id or not secret:
        raise InvalidToken("malformed")
    return key_id, secret


def verify_token(raw: str) -> ApiToken:
    """The active token row that ``raw`` proves, with its tenant and user loaded.

    Raises:
        InvalidToken: malformed, unknown, wrong secret, revoked, expired, or its user is inactive.
    """
    key_id, secret = parse_token(raw)
    token = ApiToken.all_tenants.select_related("tenant", "user").filter(key_id=key_id).first()
    return check_token(token, secret)


def check_token(token: ApiToken | None, secret: str) -> ApiToken:
    """``token`` if ``secret`` is its secret and it may be used now (the one place for these rules).

    ``token`` is the row found by the key id (None when unknown), with its user loaded.

    Raises:
        InvalidToken: unknown, wrong secret, revoked, expired, or its user is inactive.
    """
    # Compare even when the key id is unknown, so timing does not reveal which key ids exist.
    expected = token.secret_hash if token else hash_secret(secrets.token_urlsafe(32))
    if not hmac.compare_digest(expected, hash_secret(secret)) or token is None:
        raise InvalidToken("unknown")
    check_token_usable(token)
    touch_last_used(token)
    return token


def check_token_usable(token: ApiToken) -> ApiToken:
    """``token`` if it may be used now: not revoked, not expired, its user active (with its user loaded).

    ``check_token`` asks this after the secret; a stored caller re-derived later
    (``tenants.callers.caller_now``) asks it of the token it came with.

    Raises:
        InvalidToken: revoked, expired, or its user is inactive.
    """
    if token.revoked_at is not None:
        raise InvalidToken("revoked")
    if token.expires_at is not None and token.expires_at <= timezone.now():
        raise InvalidToken("expired")
    if not token.user.is_active:
        raise InvalidToken("inactive user")
    return token


def touch_last_used(row: Any) -> None:
    """Record that a credential row (an API token, an OAuth connection: a model instance with a
    ``last_used_at`` field) was used now, writing it at most once a ``LAST_USED_RESOLUTION``."""
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
        type(row)._base_manager.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
