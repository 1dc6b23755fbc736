"""Error ids: ``err_`` + a ULID (26 Crockford base32 chars: 48-bit ms timestamp, 80 random bits)."""

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PREFIX = "err_"


def new_error_id() -> str:
    """A fresh, time-sortable, unguessable error id such as ``err_01JB8Q7M2X4V6T9K3N5P7R1S2W``."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return PREFIX + "".join(reversed(chars))
