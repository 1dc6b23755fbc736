"""The call-slot options come from the environment: SANDBOX_UID_RANGE, SANDBOX_SCRATCH_MB and
SANDBOX_MAX_CONCURRENT reach the process-wide sandbox the server configures.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SHOW = """
import json, django
django.setup()
from apps_runtime.sandbox import get_sandbox
box = get_sandbox()
print(json.dumps([box.uid_range, box.scratch_mb, box.max_concurrent]))
"""


def _configured(tmp_path, **env) -> subprocess.CompletedProcess:
    base = {
        "PATH": os.environ["PATH"],
        "DEBUG": "true",
        "PLATFORM_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "lowcode_platform.settings",
    }
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **env},
    )


def test_the_call_slot_settings_reach_the_sandbox_from_the_environment(tmp_path):
    shown = _configured(
        tmp_path,
        SANDBOX_UID_RANGE="1879113728-1879113983",
        SANDBOX_SCRATCH_MB="8",
        SANDBOX_MAX_CONCURRENT="3",
    )

    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [[1879113728, 1879113983], 8, 3]


def test_a_malformed_uid_range_stops_the_server_with_its_name(tmp_path):
    shown = _configured(tmp_path, SANDBOX_UID_RANGE="lots")

    assert shown.returncode != 0
    assert "SANDBOX_UID_RANGE='lots' is not a range FIRST-LAST of integers" in shown.stderr


def test_an_empty_uid_range_is_refused(tmp_path):
    shown = _configured(tmp_path, SANDBOX_UID_RANGE="2000-1000")

    assert shown.returncode != 0
    assert "uid_range must be (first, last)" in shown.stderr
