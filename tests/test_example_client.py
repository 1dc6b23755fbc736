"""examples/mcp_client.py follows the demo's port (``make demo PORT=8001``) when no URL is given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mcp_client.py"


def _help(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k not in {"PORT", "MCP_URL"}}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--help"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_the_default_url_is_the_demos_port_when_port_is_set():
    assert "default: http://127.0.0.1:8001/t/acme/mcp" in _help(PORT="8001")


def test_the_default_url_is_port_8000_otherwise():
    assert "default: http://127.0.0.1:8000/t/acme/mcp" in _help()
