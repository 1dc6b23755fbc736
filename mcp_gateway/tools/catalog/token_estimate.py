"""The one token estimate of the platform: UTF-8 bytes of the compact JSON, divided by 4, rounded up.

A rule of thumb, not a tokenizer: about right for English text and JSON; real tokenizers differ by
model, typically within a third either way. The console's tools/list preview and the output budget
of tool results both count with it, so the two figures agree.
"""

from __future__ import annotations

import json
import math
from typing import Any

BYTES_PER_TOKEN = 4
RULE = "UTF-8 bytes of the compact JSON, divided by 4, rounded up"


def compact_json(value: Any) -> str:
    """``value`` as the compact JSON the estimate counts (and the gateway sends as text)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_bytes(value: Any) -> int:
    """UTF-8 bytes of ``value``'s compact JSON."""
    return len(compact_json(value).encode("utf-8"))


def tokens_for_bytes(size: int) -> int:
    return math.ceil(size / BYTES_PER_TOKEN)


def bytes_for_tokens(tokens: int) -> int:
    """The most bytes whose estimate is at most ``tokens``."""
    return tokens * BYTES_PER_TOKEN


def estimate_tokens(value: Any) -> int:
    """The token estimate of ``value`` (see the module docstring for the rule)."""
    return tokens_for_bytes(json_bytes(value))
