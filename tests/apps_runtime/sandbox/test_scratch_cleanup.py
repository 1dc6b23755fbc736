"""Scratch dirs a killed server left behind are removed when the next sandbox starts there; nobody else's
are touched.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from apps_runtime.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[3]
SERVER = """
import sys, time
from apps_runtime.sandbox import Sandbox

box = Sandbox(scratch_root=sys.argv[1], bundle_root=sys.argv[2])
print(box.start(), box.scratch_dir, flush=True)
time.sleep(120)
"""


def _mounts_under(path: str) -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(path + "/")]


@pytest.fixture
def scratch_parent():
    path = tempfile.mkdtemp(prefix="sandbox-scratch-parent-")
    os.chmod(path, 0o711)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _killed_server(scratch_parent: str, bundles_root) -> str:
    """Start a sandbox in another process, SIGKILL that process, return the scratch dir it left."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, scratch_parent, str(bundles_root)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"]},
    )
    try:
        tier, scratch_dir = server.stdout.readline().split()
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
        server.stdout.close()
    assert tier == "namespaces"
    return scratch_dir


def test_scratch_dirs_of_a_killed_server_are_removed_when_the_next_sandbox_starts(
    scratch_parent, bundles_root
):
    stale = _killed_server(scratch_parent, bundles_root)
    assert os.path.isdir(stale)
    if os.geteuid() == 0:
        assert _mounts_under(stale)  # its call slots' filesystems outlived it

    box = Sandbox(scratch_root=scratch_parent, bundle_root=str(bundles_root))
    try:
        box.start()
        assert not os.path.exists(stale)
        assert not _mounts_under(stale)
        assert os.listdir(scratch_parent) == [os.path.basename(box.scratch_dir)]
    finally:
        box.close()
    assert os.listdir(scratch_parent) == []


def test_scratch_dirs_of_live_sandboxes_and_dirs_not_provably_ours_are_left_alone(
    scratch_parent, bundles_root
):
    live = Sandbox(scratch_root=scratch_parent, bundle_root=str(bundles_root))
    live.start()
    no_owner = Path(scratch_parent) / "apps-sandbox-noowner"  # e.g. made by an older version
    no_owner.mkdir()
    other_namespace = Path(scratch_parent) / "apps-sandbox-container"  # a pid of another PID namespace
    other_namespace.mkdir()
    (other_namespace / "owner").write_text(
        json.dumps(
            {
                "pid": 999_999,
                "start": 1,
                "pidns": 1,
                "boot": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
            }
        )
    )
    (other_namespace / "owner").chmod(0o600)
    not_ours = Path(scratch_parent) / "apps-sandbox-notadir"
    not_ours.write_text("a file")

    box = Sandbox(scratch_root=scratch_parent, bundle_root=str(bundles_root))
    try:
        box.start()
        left = set(os.listdir(scratch_parent))
    finally:
        box.close()
        live.close()

    assert left == {
        os.path.basename(live.scratch_dir),
        os.path.basename(box.scratch_dir),
        no_owner.name,
        other_namespace.name,
        not_ours.name,
    }
