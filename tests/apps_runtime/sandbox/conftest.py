"""Fixtures for the sandbox tests: one shared Sandbox, and handler bundles written into tmp_path."""

from collections.abc import Callable
from pathlib import Path

import pytest

from apps_runtime.sandbox import Broker, Invocation, Outcome, Sandbox, SandboxLimits

from .bundles import HANDLER, refuse_data_calls, write_bundle


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory) -> Sandbox:
    box = Sandbox(scratch_root=str(tmp_path_factory.mktemp("sandbox-scratch")))
    yield box
    box.close()


@pytest.fixture
def bundle_dir(tmp_path) -> Path:
    path = tmp_path / "bundle"
    path.mkdir()
    return path


RunHandler = Callable[..., Outcome]


@pytest.fixture
def run_handler(sandbox, bundle_dir) -> RunHandler:
    """``run_handler(source, request=None, broker=None, files=None, **limits)``: write ``source`` as
    server/handler.py (plus ``files``) into a bundle and run it through the shared sandbox.
    """

    def run(
        source: str,
        request: dict | None = None,
        broker: Broker | None = None,
        files: dict[str, str] | None = None,
        **limits,
    ) -> Outcome:
        write_bundle(bundle_dir, {HANDLER: source, **(files or {})})
        invocation = Invocation(str(bundle_dir), HANDLER, request or {}, SandboxLimits(**limits))
        return sandbox.run(invocation, broker or refuse_data_calls)

    return run
