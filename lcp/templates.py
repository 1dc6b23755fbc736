"""The app templates ``lcp init`` writes (package data under ``lcp/templates/``, the one source of them).

Each file's ``__APP__`` becomes the app's name and ``__TITLE__`` its title.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from lcp.exceptions import LcpError

TEMPLATES = ("blank", "crud")
APP_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # the manifest's app name pattern


def template_files(template: str) -> dict[str, str]:
    """Relative path -> text of every file of ``template``, placeholders unfilled."""
    root = resources.files("lcp") / "templates" / template
    found: dict[str, str] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[f"{prefix}{child.name}"] = child.read_text(encoding="utf-8")

    walk(root, "")
    return found


def render(template: str, name: str) -> dict[str, str]:
    """The files of ``template`` for an app called ``name``."""
    title = name.replace("_", " ").capitalize()
    return {
        path: text.replace("__APP__", name).replace("__TITLE__", title)
        for path, text in template_files(template).items()
    }


def write_app(template: str, name: str, target: Path) -> list[str]:
    """Write a new app folder; returns the paths written.

    Raises:
        LcpError: a name the manifest would refuse, or ``target`` exists and is not empty.
    """
    if not APP_NAME.fullmatch(name):
        raise LcpError(
            f"'{name}' is not an app name: lowercase letters, digits and _, a letter first, at most 40"
        )
    if target.exists() and any(target.iterdir()):
        raise LcpError(f"{target} exists and is not empty: choose another name or folder")
    files = render(template, name)
    for path, text in sorted(files.items()):
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    return sorted(files)
