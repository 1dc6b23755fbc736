"""Values encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256, ``cryptography``): agents' provider
keys, tenant secrets, members' outbound connection tokens.

The key is ``AGENT_KEY_ENCRYPTION_KEY`` when the operator sets one, else derived from ``SECRET_KEY``;
each use derives its own key with its own salt, so one kind of value never opens as another.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

__all__ = ["InvalidToken", "fernet", "open_value", "seal"]


def fernet(salt: bytes, *, secret: str | None = None) -> Fernet:
    """The Fernet of one kind of value (``salt``), under the operator's key."""
    secret = secret or settings.AGENT_KEY_ENCRYPTION_KEY or settings.SECRET_KEY
    digest = hashlib.sha256(salt + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(salt: bytes, plain: str) -> str:
    return fernet(salt).encrypt(plain.encode()).decode("ascii")


def open_value(salt: bytes, token: str) -> str:
    """Raises: InvalidToken: not sealed under the current key (it was rotated)."""
    return fernet(salt).decrypt(token.encode("ascii")).decode()
