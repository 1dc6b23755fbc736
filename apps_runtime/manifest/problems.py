"""Deploy problems: where in ``app.json`` something is wrong, and what to change.

A pointer is an RFC 6901 JSON pointer into ``app.json`` (``~`` is written ``~0`` and ``/`` is
written ``~1``, so the key ``"GET /cases/search"`` appears as ``GET ~1cases~1search``), with one
exception: the document root is ``"/"`` rather than RFC 6901's empty string, so every printed line
starts with ``/``. (A key ``""`` at the root would print the same; no manifest key is empty.)
Problems about the bundle as a whole (a hostile path, a size limit, JSON syntax) point at the root.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass

from core.errors import DomainError

ROOT = "/"


def escape_token(token: str | int) -> str:
    """Escape one reference token per RFC 6901."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    """Build a pointer from unescaped tokens; no tokens gives the root, ``"/"``."""
    if not tokens:
        return ROOT
    return "".join("/" + escape_token(token) for token in tokens)


def child(parent: str, *tokens: str | int) -> str:
    """Extend the pointer ``parent`` with unescaped ``tokens``."""
    if not tokens:
        return parent
    base = "" if parent == ROOT else parent
    return base + "".join("/" + escape_token(token) for token in tokens)


def split_pointer(ptr: str) -> list[str]:
    """Return the unescaped tokens of ``ptr`` (the root gives an empty list)."""
    if ptr == ROOT or ptr == "":
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in ptr[1:].split("/")]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with (or, as a warning, risky in) a bundle: a pointer and what to change."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer}: {self.message}"


def sort_key(problem: Problem) -> tuple:
    """Order problems by location (array indexes numerically), then by message."""
    tokens = tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in split_pointer(problem.pointer))
    return (tokens, problem.message)


def ordered(problems: Iterable[Problem]) -> list[Problem]:
    """Drop exact duplicates and order by location."""
    return sorted(set(problems), key=sort_key)


class DeployRejected(DomainError):
    """A bundle that cannot be deployed; ``problems`` lists every reason (never just the first)."""

    status, code = 422, "deploy_rejected"

    def __init__(self, problems: Iterable[Problem], *, warnings: Iterable[Problem] = ()):
        self.problems = list(problems)
        if not self.problems:
            raise ValueError("DeployRejected needs at least one problem")
        self.warnings = list(warnings)
        count = len(self.problems)
        lines = "\n".join(str(problem) for problem in self.problems)
        super().__init__(f"deploy rejected, {count} problem{'s' if count != 1 else ''}:\n{lines}")

    def problem_members(self) -> dict:
        """The members of its problem body (``core.problems.error_response``)."""
        count = len(self.problems)
        plural = "s" if count != 1 else ""
        return {
            "detail": f"the bundle was refused: {count} problem{plural}, each with its JSON pointer",
            "problems": [{"pointer": p.pointer, "message": p.message} for p in self.problems],
            "warnings": [str(w) for w in self.warnings],
        }


class BundleTooLarge(DeployRejected):
    """A bundle refused for its size before it was read: the upload, the archive or the request body."""

    status, code = 413, "bundle_too_large"


def shorten(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for a message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(value: object) -> str:
    """A JSON value as the user wrote it, shortened, for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text)
