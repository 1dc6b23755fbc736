"""docs/architecture.md names a function for each rule: every name it gives must exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
PACKAGES = (
    "core",
    "tenants",
    "apps_runtime",
    "oauth",
    "mcp_gateway",
    "console",
    "lowcode_platform",
    "agents",
    "builder",
    "lcp",
)


def _named_objects() -> list[str]:
    """Every dotted name in backticks that starts with a package of the platform."""
    names = re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)`", DOC.read_text())
    return sorted({name for name in names if name.split(".")[0] in PACKAGES})


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for attr in parts[split:]:
            found = getattr(found, attr)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_page_names_the_rules():
    assert len(_named_objects()) >= 15


@pytest.mark.parametrize("dotted", _named_objects())
def test_every_function_the_page_names_exists(dotted):
    assert _resolve(dotted) is not None
