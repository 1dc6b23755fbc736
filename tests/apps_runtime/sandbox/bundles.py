"""Helpers to write handler bundles for the sandbox tests."""

import textwrap
from pathlib import Path

HANDLER = "server/handler.py"


def refuse_data_calls(op: str, args: dict):
    """A broker for handlers that must not make data calls."""
    raise AssertionError(f"unexpected data call {op} {args}")


def write_bundle(root: Path, files: dict[str, str]) -> str:
    """Write ``files`` (relative path -> source, dedented) under ``root``; return the bundle dir."""
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return str(root)
