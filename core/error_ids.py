"""Error ids: what a caller sees instead of a stack trace, and what the logs are keyed by."""

from ulid import ULID


def new_error_id() -> str:
    """``err_`` and a ULID: time-sortable and unguessable."""
    return f"err_{ULID()}"
