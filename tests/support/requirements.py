"""Tests that need something from outside the project (a binary, the package index, a git checkout).

On a developer's machine such a test is skipped, saying what is missing. Under CI (``CI=true``),
where ``.ci/run`` and ``make test`` install every requirement first, it fails instead: CI never
passes by skipping the test.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str) -> NoReturn:
    """Skip the test because ``what`` is missing here; under CI, fail it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what}, and CI must run this test (CI=true)")
    pytest.skip(what)
