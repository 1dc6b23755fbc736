"""The one rule for tenant-authored text the platform keeps or logs: escape what cannot be stored.

A handler's exception message (and so its trace) can hold a lone surrogate, which UTF-8 cannot
encode: the database driver, a log handler writing UTF-8 and any process boundary that encodes
text refuse it. PostgreSQL also refuses a NUL in text. Such characters are kept as their escapes
(``\\ud800``, ``\\x00``), so the text still says what the handler raised.
"""

from __future__ import annotations


def storable_text(text: str) -> str:
    """``text`` with each lone surrogate and NUL replaced by its backslash escape; other text as is."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
