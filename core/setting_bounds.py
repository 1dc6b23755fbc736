"""The one rule for numeric platform settings' bounds: what a value must be, and the system check of it.

Each bound is declared with its setting (``core.env_settings``, in the ``conf.py`` of the app that
reads it): a value from the environment outside it stops start-up; these checks catch values set
otherwise (tests override settings) and run with every management command.
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error

from core.env_settings import Bound, SettingsGroup

__all__ = ["Bound", "bound_errors", "group_errors"]


def bound_errors(bounds: dict[str, Bound], check_id: str) -> list[Error]:
    """An error for each setting of ``bounds`` whose value breaks its bound."""
    return [
        Error(
            f"{name}={getattr(settings, name, None)!r} must be {bound.describe()}",
            hint=f"fix {name} in the environment, or unset it to get the default (docs/configuration.md)",
            id=check_id,
        )
        for name, bound in bounds.items()
        if not bound.allows(getattr(settings, name, None))
    ]


def group_errors(groups: tuple[type[SettingsGroup], ...], check_id: str) -> list[Error]:
    """The system check of ``groups``' bounds against the settings as they are now (tests override them).

    A variable that only feeds a setting of another name (``DB_CONN_MAX_AGE``, in ``DATABASES``) is
    checked at start-up alone.
    """
    bounds = {
        name: bound for group in groups for name, bound in group.bounds().items() if hasattr(settings, name)
    }
    return bound_errors(bounds, check_id)
