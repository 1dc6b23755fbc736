"""The purge registry: each app registers its purge in ``ready``; the top layer runs them all."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core import retention


@pytest.fixture
def registry(monkeypatch):
    """A registry of this test's own, the apps' registrations put back afterwards."""
    monkeypatch.setattr(retention, "_purges", {})
    return retention


def test_every_app_that_keeps_growing_rows_registers_its_purge():
    assert list(retention.registered_purges()) == [
        "tenants",
        "apps_runtime",
        "mcp_gateway",
        "agents",
        "oauth",
    ]


@pytest.mark.django_db
def test_purge_all_names_every_kind_each_app_purges():
    counts = retention.purge_all()
    assert set(counts) == {
        "tenant_audit",
        "handler_errors",
        "job_runs",
        "outbound_requests",
        "call_logs",
        "tool_call_audit",
        "approvals",
        "agent_runs",
        "agent_run_steps",
        "oauth_clients",
    }


def test_purge_all_runs_each_registered_purge_with_one_moment(registry):
    moment = datetime(2030, 1, 1, tzinfo=UTC)
    seen: list[tuple[str, datetime]] = []
    registry.register_purge("first", lambda now: seen.append(("first", now)) or {"a": 1})
    registry.register_purge("second", lambda now: seen.append(("second", now)) or {"b": 2})

    assert registry.purge_all(moment) == {"a": 1, "b": 2}
    assert seen == [("first", moment), ("second", moment)]


def test_registering_again_under_one_name_replaces(registry):
    registry.register_purge("app", lambda now: {"a": 1})
    registry.register_purge("app", lambda now: {"a": 2})
    assert registry.purge_all() == {"a": 2}


def test_two_purges_counting_one_kind_are_refused(registry):
    registry.register_purge("one", lambda now: {"rows": 1})
    registry.register_purge("two", lambda now: {"rows": 2})
    with pytest.raises(ValueError, match="rows"):
        registry.purge_all()
