"""Provider API keys, encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256, ``cryptography``).

The encryption key is ``AGENT_KEY_ENCRYPTION_KEY`` when the operator sets one, else derived from
``SECRET_KEY`` (so rotating SECRET_KEY without setting the old value here makes stored keys
unreadable: tenants then store them again). A stored key is only ever decrypted to build the
client of its own provider; no surface returns it.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

from agents.exceptions import AgentError
from core import sealing

_DERIVATION_SALT = b"lowcode-platform agents provider keys v1\x00"


class KeyUnreadable(AgentError):
    """A stored key that the current encryption key cannot open (the secret was rotated)."""

    status, code = 409, "provider_key_unreadable"

    def __init__(self, provider: str):
        self.provider = provider
        super().__init__(
            f"the stored API key for provider '{provider}' cannot be decrypted (the platform's "
            "encryption key changed): a tenant admin stores it again"
        )


def _fernet(*, secret: str | None = None) -> Fernet:
    return sealing.fernet(_DERIVATION_SALT, secret=secret)


def encrypt_key(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode("ascii")


def decrypt_key(token: str, provider: str) -> str:
    """Raises: KeyUnreadable: not encrypted under the current key."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except InvalidToken:
        raise KeyUnreadable(provider) from None
