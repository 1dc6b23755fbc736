"""An app folder as the deploy API takes it: ``{"manifest": app.json, "files": {path: text}}``."""

from __future__ import annotations

import json
from pathlib import Path

from lcp.exceptions import LcpError

MANIFEST = "app.json"
# Left out of a deploy: the app's own tests, caches, and hidden files (editors, git).
SKIPPED_DIRS = frozenset({"tests", "__pycache__", "node_modules", ".git"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", "~", ".swp")
MAX_FILES = 2000


def bundle_paths(folder: Path) -> list[Path]:
    """The files of ``folder`` a deploy sends, in a stable order."""
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") or part in SKIPPED_DIRS for part in parts):
            continue
        if path.is_file() and not path.name.endswith(SKIPPED_SUFFIXES):
            found.append(path)
    return found


def read_folder(folder: Path) -> dict:
    """The deploy body of the app in ``folder``.

    Raises:
        LcpError: no such folder, no app.json, app.json is not JSON, a file is not UTF-8 text.
    """
    if not folder.is_dir():
        raise LcpError(f"{folder} is not a folder: give the app's folder (the one holding {MANIFEST})")
    manifest_path = folder / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        hint = "is it an app folder? (`lcp init NAME` makes one)"
        raise LcpError(f"{folder} has no {MANIFEST}: {hint}") from None
    except ValueError as err:
        raise LcpError(f"{manifest_path}: not JSON: {err}") from None
    paths = bundle_paths(folder)
    if len(paths) > MAX_FILES:
        raise LcpError(f"{folder} holds {len(paths)} files; an app bundle has at most {MAX_FILES}")
    files = {}
    for path in paths:
        relative = path.relative_to(folder).as_posix()
        if relative == MANIFEST:
            continue
        try:
            files[relative] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise LcpError(f"{relative}: not UTF-8 text; `lcp` deploys text files only") from None
    return {"manifest": manifest, "files": files}


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file a deploy would send: what ``lcp dev`` compares between looks."""
    result = {}
    for path in bundle_paths(folder):
        try:
            found = path.stat()
        except OSError:
            continue  # removed between the listing and the look
        result[path.relative_to(folder).as_posix()] = (found.st_mtime_ns, found.st_size)
    return result
