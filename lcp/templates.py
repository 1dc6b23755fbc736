"""``lcp init``: a new app folder from a template of ``app_templates`` (their one source, shared with the
console's "New app")."""

from __future__ import annotations

from pathlib import Path

from app_templates import TEMPLATES, Field, TemplateError, parse_field, render
from lcp.exceptions import LcpError

__all__ = ["TEMPLATES", "fields_of", "render", "write_app"]


def fields_of(specs: tuple[str, ...]) -> list[Field] | None:
    """The ``--field name:type[:required]`` options as fields (None when none were given).

    Raises:
        LcpError: a field the generator refuses, with every problem.
    """
    if not specs:
        return None
    found, problems = [], []
    for spec in specs:
        try:
            found.append(parse_field(spec))
        except TemplateError as err:
            problems += err.problems
    if problems:
        raise LcpError("; ".join(problems))
    return found


def write_app(template: str, name: str, target: Path, fields: list[Field] | None = None) -> list[str]:
    """Write a new app folder; returns the paths written.

    Raises:
        LcpError: a name the manifest would refuse, bad fields, or ``target`` exists and is not empty.
    """
    try:
        files = render(template, name, fields)
    except TemplateError as err:
        raise LcpError("; ".join(err.problems)) from None
    if target.exists() and any(target.iterdir()):
        raise LcpError(f"{target} exists and is not empty: choose another name or folder")
    for path, text in sorted(files.items()):
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    return sorted(files)
