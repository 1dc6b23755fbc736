"""Issue 26 item 7: at tier 3 a handler reaches services on loopback (Redis answered +PONG), so the
platform, ``make demo`` included, refuses tier 3 unless the operator names it (SANDBOX_MIN_TIER=3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps_runtime.sandbox import Sandbox, SandboxUnavailable

ROOT = Path(__file__).resolve().parents[3]


def _env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "DATABASE_URL", "PLATFORM_VAR_DIR")}
    return {**keep, **extra}


def test_the_default_minimum_tier_is_2_even_with_debug_on():
    """``make demo`` runs with DEBUG=true: it used to allow tier 3 on a host without bubblewrap."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.SANDBOX_MIN_TIER)"
    env = _env(DEBUG="true", DJANGO_SETTINGS_MODULE="lowcode_platform.settings")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
    named = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "SANDBOX_MIN_TIER": "3"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert named.stdout.strip() == "3"


def test_a_sandbox_at_tier_3_refuses_to_start_unless_tier_3_is_named(bundles_root):
    refused = Sandbox(bundle_root=str(bundles_root), min_tier=2, tier="3")
    try:
        with pytest.raises(SandboxUnavailable):
            refused.start()
    finally:
        refused.close()
    named = Sandbox(bundle_root=str(bundles_root), min_tier=3, tier="3")
    try:
        named.start()
        assert named.tier_level == 3
    finally:
        named.close()


def test_the_demo_probe_fails_at_tier_3_with_the_default_minimum(bundles_root):
    """The Makefile's demo target runs this probe with --min-tier ${SANDBOX_MIN_TIER:-2} before serving."""
    argv = [sys.executable, "-m", "apps_runtime.sandbox", "--bundle-root", str(bundles_root), "--tier", "3"]
    probe = subprocess.run(
        [*argv, "--min-tier", "2"], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert probe.returncode == 1 and probe.stdout.startswith("UNAVAILABLE")
    makefile = (ROOT / "Makefile").read_text()
    assert "--min-tier $${SANDBOX_MIN_TIER:-2}" in makefile
