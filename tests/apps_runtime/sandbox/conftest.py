"""Fixtures for the sandbox tests: one shared Sandbox (the strongest tier this host offers), one per forced
tier, and handler bundles written into a bundles root the way the platform lays them out.
"""

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from apps_runtime.sandbox import (
    TIER_NAMES,
    Broker,
    Invocation,
    Outcome,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
)

from .bundles import HANDLER, refuse_data_calls, write_bundle

# CI runs on this kind of machine, as root, with bubblewrap installed (.ci/install-system-deps): every tier
# must work there. A tier that does not work fails its tests, it never skips them.
TIERS = (1, 2, 3)


def _world_traversable_dir(prefix: str) -> str:
    # Not under pytest's tmp_path, whose 0700 parents the sandbox uid could not traverse at tiers 2 and 3 —
    # like the platform's var/bundles, which is reached through its own mount (tier 1) or an fd (2 and 3).
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o711)
    return path


@pytest.fixture(scope="session")
def bundles_root():
    path = _world_traversable_dir("sandbox-bundles-")
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox(bundles_root) -> Sandbox:
    """The sandbox as the platform runs it: the strongest tier that works here."""
    scratch_root = _world_traversable_dir("sandbox-scratch-")
    box = Sandbox(scratch_root=scratch_root, bundle_root=str(bundles_root))
    yield box
    box.close()
    shutil.rmtree(scratch_root, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox_at(bundles_root) -> Callable[[int], Sandbox]:
    """``sandbox_at(tier)``: a shared Sandbox forced to ``tier`` (tier 4, "unconfined", included). Fails the
    test when the tier does not work on this host.
    """
    boxes: dict[int, Sandbox] = {}

    def get(level: int) -> Sandbox:
        if level not in boxes:
            box = Sandbox(bundle_root=str(bundles_root), tier=level, min_tier=4)
            try:
                box.start()
            except SandboxUnavailable as exc:
                box.close()
                pytest.fail(f"isolation tier {level} ({TIER_NAMES[level]}) is unavailable here: {exc}")
            boxes[level] = box
        return boxes[level]

    yield get
    for box in boxes.values():
        box.close()


@pytest.fixture
def bundle_dir(bundles_root) -> Path:
    path = Path(tempfile.mkdtemp(prefix="app-", dir=bundles_root))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


RunHandler = Callable[..., Outcome]


def _runner(box_for: Callable[[], Sandbox], bundle_dir: Path) -> RunHandler:
    def run(
        source: str,
        request: dict | None = None,
        broker: Broker | None = None,
        files: dict[str, str] | None = None,
        tenant_key: str | None = None,
        **limits,
    ) -> Outcome:
        write_bundle(bundle_dir, {HANDLER: source, **(files or {})})
        invocation = Invocation(str(bundle_dir), HANDLER, request or {}, SandboxLimits(**limits), tenant_key)
        return box_for().run(invocation, broker or refuse_data_calls)

    return run


@pytest.fixture
def run_handler(sandbox, bundle_dir) -> RunHandler:
    """``run_handler(source, request=None, broker=None, files=None, tenant_key=None, **limits)``: write
    ``source`` as server/handler.py (plus ``files``) into a bundle and run it through the shared sandbox.
    """
    return _runner(lambda: sandbox, bundle_dir)


@pytest.fixture
def run_at(sandbox_at, bundle_dir) -> Callable[..., Outcome]:
    """``run_at(tier, source, ...)``: like ``run_handler``, through the sandbox forced to ``tier``."""

    def run(level: int, source: str, *args, **kwargs) -> Outcome:
        return _runner(lambda: sandbox_at(level), bundle_dir)(source, *args, **kwargs)

    return run
