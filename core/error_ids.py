"""Error ids: what a caller sees instead of a stack trace, and what the logs are keyed by.

The one generator and the one way a message cites an id. Standard library and python-ulid only (no
Django), so the sandbox's host side, which must not import Django, uses it too.
"""

from ulid import ULID

PREFIX = "err_"


def new_error_id() -> str:
    """``err_`` and a ULID (26 Crockford base32 characters): time-sortable and unguessable."""
    return f"{PREFIX}{ULID()}"


def error_id_note(error_id: str) -> str:
    """How a message shown to a caller cites an error id: ``(error id err_...)``."""
    return f"(error id {error_id})"
