"""Decoding the frames a child sends to the host: JSON objects, nested within a fixed bound.

A handler can write any bytes to its protocol socket. Frame size is capped by the decoder; nesting is capped
here, because a deeply nested payload makes ``json.loads`` (and every recursive consumer after it: schema
validation, ``json.dumps``, the ORM) raise RecursionError in the web process.
"""

import json

# Handler values (a response body, the data of a records call) may nest this many arrays/objects.
MAX_VALUE_DEPTH = 64
# The frame envelope adds two levels: {"result": {"body": value}} and {"op": ..., "args": {"data": value}}.
MAX_FRAME_DEPTH = MAX_VALUE_DEPTH + 2
_CONTAINERS = (dict, list)


class FrameRejected(ValueError):
    """A payload the host refuses: not JSON, not an object, or nested deeper than ``MAX_FRAME_DEPTH``."""

    def __init__(self, reason: str, *, too_deep: bool = False):
        self.reason = reason
        self.too_deep = too_deep
        super().__init__(reason)


def _depth_within(value: object, limit: int) -> bool:
    """True when ``value`` nests at most ``limit`` containers deep; level by level, without recursion."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    for _ in range(limit):
        below = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            below += [item for item in items if isinstance(item, _CONTAINERS)]
        if not below:
            return True
        level = below
    return not level


def decode_frame(payload: bytes) -> dict:
    """The JSON object in ``payload``.

    Raises:
        FrameRejected: not a JSON object, or nested deeper than ``MAX_FRAME_DEPTH``.
    """
    # Fast path: a payload with few brackets cannot nest deeply (brackets inside strings only overcount).
    shallow = payload.count(b"[") + payload.count(b"{") <= MAX_FRAME_DEPTH
    try:
        frame = json.loads(payload)
    except RecursionError:
        # The C decoder checks the recursion limit at each level and unwinds cleanly.
        raise FrameRejected(f"nested deeper than {MAX_FRAME_DEPTH} levels", too_deep=True) from None
    except ValueError:
        raise FrameRejected("a frame that is not JSON") from None
    if not isinstance(frame, dict):
        raise FrameRejected("a frame that is not a JSON object")
    if not shallow and not _depth_within(frame, MAX_FRAME_DEPTH):
        raise FrameRejected(f"nested deeper than {MAX_FRAME_DEPTH} levels", too_deep=True)
    return frame
