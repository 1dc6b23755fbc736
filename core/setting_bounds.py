"""The one rule for numeric platform settings' bounds: what a value must be, and the system check of it.

Each bound is declared with its setting (``core.env_settings``, in the ``conf.py`` of the app that
reads it): a value from the environment outside it stops start-up; these checks catch values set
otherwise (tests override settings) and run with every management command.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.checks import Error


@dataclass(frozen=True)
class Bound:
    """A numeric setting's type and range (``high`` None: no upper bound)."""

    kind: type
    low: float
    high: float | None = None

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        if self.high is None:
            return f"{what} of at least {self.low}"
        return f"{what} from {self.low} to {self.high}"

    def allows(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        return self.low <= value and (self.high is None or value <= self.high)


def bound_errors(bounds: dict[str, Bound], check_id: str) -> list[Error]:
    """An error for each setting of ``bounds`` whose value breaks its bound."""
    return [
        Error(
            f"{name}={getattr(settings, name, None)!r} must be {bound.describe()}",
            hint=f"fix {name} in the environment, or unset it to get the default (README: Configuration)",
            id=check_id,
        )
        for name, bound in bounds.items()
        if not bound.allows(getattr(settings, name, None))
    ]
