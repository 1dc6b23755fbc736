"""A list of role names as people type it: the one parser for the CLI, the console and the API."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[\s,]+")


def parse_roles(text: str | None) -> list[str]:
    """``"a, b c"`` -> ``["a", "b", "c"]``: commas and/or spaces separate, empty items are dropped.

    Names are not checked here; the action that uses them refuses a bad one (``InvalidValue``).
    """
    return [role for role in _SEPARATORS.split(text or "") if role]
