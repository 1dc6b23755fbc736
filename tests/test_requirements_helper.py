"""A test whose outside requirement is missing is skipped on a developer's machine, failed under CI."""

from __future__ import annotations

import pytest

from tests.support.requirements import missing


def test_a_missing_requirement_skips_here_and_fails_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="haproxy is not installed"):
        missing("haproxy is not installed")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run this test"):
        missing("haproxy is not installed")
