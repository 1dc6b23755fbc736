"""Errors of the console."""

from __future__ import annotations

from django.http import Http404


class ConsoleNotFound(Http404):
    """A tenant or page the user may not open: one answer for "missing" and "not yours"."""

    def __init__(self) -> None:
        super().__init__("No such page.")
