"""Shared set-up for benchmarks: Django on a scratch database (or $BENCH_DATABASE_URL), migrated."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# FastMCP, a peer in bench_gateway.py and bench_search.py, in a venv of its own: it pins ``mcp`` on its own
# schedule, so it never enters the project's environment.
FASTMCP = "fastmcp==4.1.6"


def setup_django() -> None:
    """Configure Django on a fresh database so runs never touch var/ or another database.

    Idempotent, so one benchmark may import helpers from another.
    """
    if os.environ.get("BENCH_READY") == str(os.getpid()):
        return
    os.environ["BENCH_READY"] = str(os.getpid())
    sys.path.insert(0, str(ROOT))
    scratch = tempfile.mkdtemp(prefix="bench-")
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{scratch}/bench.sqlite3"
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["PLATFORM_VAR_DIR"] = scratch
    os.environ["DJANGO_SETTINGS_MODULE"] = "lowcode_platform.settings"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("flush", "--noinput", verbosity=0) if "postgres" in os.environ["DATABASE_URL"] else None
    call_command("migrate", "--noinput", verbosity=0)


def percentile(samples: list[float], pct: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(samples_ms: list[float]) -> str:
    return f"p50 {statistics.median(samples_ms):7.2f} ms   p99 {percentile(samples_ms, 99):7.2f} ms"


def fastmcp_python() -> Path:
    """The interpreter of ``$BENCH_FASTMCP_VENV`` (default ``var/bench-fastmcp-venv``), made with ``python -m
    venv`` and ``pip install`` of ``FASTMCP`` on first use (the package index is needed once).
    """
    venv = Path(os.environ.get("BENCH_FASTMCP_VENV") or ROOT / "var" / "bench-fastmcp-venv")
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} with {FASTMCP} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", FASTMCP], check=True)
    return python


def pss_kib(pid: int) -> int:
    """Proportional set size of ``pid`` in KiB: pages shared by several processes split between them (0:
    gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0
