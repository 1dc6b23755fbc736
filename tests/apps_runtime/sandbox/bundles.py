"""Helpers to write handler bundles for the sandbox tests."""

import os
import textwrap
from pathlib import Path

HANDLER = "server/handler.py"


def refuse_data_calls(op: str, args: dict):
    """A broker for handlers that must not make data calls."""
    raise AssertionError(f"unexpected data call {op} {args}")


def write_bundle(root: Path, files: dict[str, str]) -> str:
    """Write ``files`` (relative path -> source, dedented) under ``root``; return the bundle dir.

    Modes are those the platform unpacks bundles with: readable by the sandbox uid, writable by nobody else.
    """
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in [path.parent, *path.parent.relative_to(root).parents]:
            os.chmod(root / parent, 0o755)
        path.write_text(textwrap.dedent(source))
        path.chmod(0o644)
    return str(root)
