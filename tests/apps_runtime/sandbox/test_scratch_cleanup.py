"""Scratch dirs a killed server left behind are removed when the next sandbox starts there; nobody else's
are touched (a live server holds a lock on its dir's owner file); a server stopped by SIGTERM unmounts and
removes its own on the way out.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from apps_runtime.sandbox import Sandbox
from tests.support.platform_process import PlatformProcess, migrated_database

ROOT = Path(__file__).resolve().parents[3]
SERVER = """
import sys, time
from apps_runtime.sandbox import Sandbox
from tests.support.platform_process import PlatformProcess, migrated_database

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


def test_a_live_servers_scratch_dir_is_left_alone_whatever_its_owner_file_claims(
    scratch_parent, bundles_root
):
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, scratch_parent, str(bundles_root)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"]},
    )
    try:
        _tier, live = server.stdout.readline().split()
        # Its record now names a process long gone (as a pid of another namespace, or reused, could): the
        # lock its server holds on the file is what tells it is alive.
        owner = Path(live) / "owner"
        record = json.loads(owner.read_text())
        owner.write_text(json.dumps({**record, "pid": 999_999, "start": 1, "locked": False}))

        box = Sandbox(scratch_root=scratch_parent, bundle_root=str(bundles_root))
        try:
            box.start()
            assert os.path.isdir(live)
            if os.geteuid() == 0:
                assert len(_mounts_under(live)) == 64  # its call slots' filesystems, all still mounted
        finally:
            box.close()
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
        server.stdout.close()

    later = Sandbox(scratch_root=scratch_parent, bundle_root=str(bundles_root))
    try:
        later.start()
        assert not os.path.exists(live)  # its server is gone now: stale, removed
    finally:
        later.close()


@pytest.mark.parametrize(
    ("whole_group", "workers"),
    [(False, 1), (True, 1), (False, 2)],
    ids=["server", "process-group", "two-workers"],
)
def test_a_server_stopped_by_sigterm_unmounts_and_removes_its_own_scratch_dir(
    scratch_parent, whole_group, workers
):
    """Each worker process of ``serve --workers`` has a sandbox of its own, and runs no atexit hook either."""
    workdir = Path(tempfile.mkdtemp(prefix="sigterm-"))
    platform = PlatformProcess(
        workdir,
        migrated_database(workdir).url,
        env={"TMPDIR": scratch_parent, "MCP_STATELESS": "true"},
        serve_args=("--workers", str(workers)),
    )
    try:
        platform.start()  # its lifespan starts the sandbox: the scratch dir and its call slots' mounts
        deadline = time.monotonic() + 30  # the other workers may still be starting
        while len(os.listdir(scratch_parent)) < workers and time.monotonic() < deadline:
            time.sleep(0.1)
        owns = [os.path.join(scratch_parent, name) for name in os.listdir(scratch_parent)]
        assert len(owns) == workers
        if os.geteuid() == 0:
            assert [len(_mounts_under(own)) for own in owns] == [64] * workers

        if whole_group:  # as systemd or a container runtime stops it: the zygote gets the signal too
            os.killpg(platform.proc.pid, signal.SIGTERM)
        else:
            platform.proc.send_signal(signal.SIGTERM)
        platform.proc.wait(timeout=30)

        assert "Application shutdown complete" in platform.log_tail()
        assert os.listdir(scratch_parent) == []
        assert [_mounts_under(own) for own in owns] == [[]] * workers
    finally:
        platform.kill()
        shutil.rmtree(workdir, ignore_errors=True)
