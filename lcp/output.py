"""How ``lcp`` prints: lines for people (results on stdout, notes on stderr), or one JSON document."""

from __future__ import annotations

import json
from typing import Any

import click


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def note(text: str) -> None:
    """A line for the person, not for a pipe: stderr."""
    click.echo(text, err=True)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def error_lines(error: dict) -> list[str]:
    """A handler error as ``lcp errors`` and ``lcp dev`` show it: a heading, the trace and the logs."""
    where = f"{error.get('app') or '?'} v{error.get('version_number')} {error.get('route_key')}"
    caller = error.get("caller") or "-"
    lines = [f"{error['error_id']} {error['created_at']} {error['kind']} in {where} as {caller}"]
    lines += [f"  {line}" for line in (error.get("trace") or "").rstrip().splitlines()]
    logs = (error.get("logs") or "").rstrip()
    if logs:
        lines.append("  logs:")
        lines += [f"    {line}" for line in logs.splitlines()]
    return lines


def call_log_lines(entry: dict) -> list[str]:
    """What a successful run logged, as ``lcp logs`` and ``lcp dev`` show it: a heading, then the lines."""
    where = f"{entry.get('app') or '?'} v{entry.get('version_number')} {entry.get('route_key')}"
    caller = entry.get("caller") or "-"
    lines = [f"{entry['created_at']} log of {where} as {caller} ({entry.get('status')})"]
    lines += [f"  {line}" for line in (entry.get("logs") or "").rstrip().splitlines()]
    return lines
