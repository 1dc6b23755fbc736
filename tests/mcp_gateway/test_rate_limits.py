"""Tool rate limits end to end: the official client against a real server, on both counter backends.

The windows are cut from ``rate_limits.clock``; the tests move that clock instead of waiting.
"""

from __future__ import annotations

import logging
import time

import anyio
import pytest

from apps_runtime.models import Record
from mcp_gateway.limits import rate_counters, rate_limits
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.catalog.catalog import catalog_for
from tenants import actions
from tenants.callers import Caller
from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import cases_manifest

CREATE = "acme_cases_create_case"
ECHO = "acme_cases_echo"
LISTING = "acme_cases_listing"


class Clock:
    """A clock at a known point of the current minute, moved by hand."""

    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    # Ten seconds into a real minute, ahead of the real time: Redis expires keys by its own clock.
    fake = Clock((int(time.time()) // 60 + 1) * 60 + 10)
    monkeypatch.setattr(rate_limits, "clock", fake)
    return fake


def limited(limit: dict, *names: str) -> dict:
    manifest = cases_manifest()
    for tool in manifest["mcp"]["tools"]:
        if tool["name"] in names:
            tool["rateLimit"] = limit
    return manifest


@pytest.fixture
def app(mcp_url, acme, deploy, rate_backend, clock):
    deploy(acme, limited({"calls": 2, "per": "minute"}, "create_case", "listing"))
    deploy(acme, limited({"calls": 2, "per": "minute"}, "create_case", "listing"))  # a redeploy keeps it
    return acme


def calls(url: str, token: str, *steps: tuple[str, dict], mode: str = "legacy") -> list:
    """Each (tool, arguments) called in turn on one connection; the results."""

    async def main():
        async with mcp_client(url, token, mode=mode) as client:
            return [await client.call_tool(name, arguments) for name, arguments in steps]

    return anyio.run(main)


def outcomes(tenant) -> list[str]:
    return list(
        ToolCallAudit.objects.for_tenant(tenant).order_by("created_at").values_list("outcome", flat=True)
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_call_over_the_limit_runs_nothing_and_says_how_long_to_wait(mcp_url, app, make_token, mode):
    writer = make_token(app, "writer")[1]

    results = calls(mcp_url(), writer, *[(CREATE, {"client_name": f"c{n}"}) for n in range(3)], mode=mode)

    assert [r.is_error for r in results] == [False, False, True]
    refused = results[2]
    assert refused.meta["retryAfter"] == 50  # ten seconds into the minute
    assert "Retry in 50 s" in refused.content[0].text
    assert "2 calls per minute for each caller" in refused.content[0].text
    assert Record.objects.for_tenant(app).count() == 2
    assert outcomes(app) == ["ok", "ok", "rate_limited"]


def test_the_limit_lifts_when_its_window_ends(mcp_url, app, make_token, clock):
    reader = make_token(app, "reader")[1]
    assert [r.is_error for r in calls(mcp_url(), reader, *[(LISTING, {})] * 3)] == [False, False, True]

    clock.now += 49
    assert calls(mcp_url(), reader, (LISTING, {}))[0].meta["retryAfter"] == 1
    clock.now += 1

    assert [r.is_error for r in calls(mcp_url(), reader, *[(LISTING, {})] * 3)] == [False, False, True]


def test_each_caller_has_their_own_count_under_user_scope(mcp_url, app, make_token):
    reader, writer = make_token(app, "reader")[1], make_token(app, "writer")[1]

    assert [r.is_error for r in calls(mcp_url(), reader, *[(LISTING, {})] * 3)] == [False, False, True]

    assert [r.is_error for r in calls(mcp_url(), writer, *[(LISTING, {})] * 2)] == [False, False]


def test_a_user_scope_limit_counts_the_person_across_their_tokens(mcp_url, app, make_token):
    first, second = make_token(app, "reader")[1], make_token(app, "reader")[1]

    assert [r.is_error for r in calls(mcp_url(), first, *[(LISTING, {})] * 2)] == [False, False]

    assert calls(mcp_url(), second, (LISTING, {}))[0].is_error


def test_tenant_scope_counts_every_caller_together(mcp_url, acme, deploy, make_token, rate_backend, clock):
    deploy(acme, limited({"calls": 2, "per": "hour", "scope": "tenant"}, "listing"))
    reader, writer = make_token(acme, "reader")[1], make_token(acme, "writer")[1]

    assert [r.is_error for r in calls(mcp_url(), reader, *[(LISTING, {})] * 2)] == [False, False]
    refused = calls(mcp_url(), writer, (LISTING, {}))[0]

    assert refused.is_error and refused.meta["retryAfter"] == 3600 - (int(clock.now) % 3600)
    assert "for the whole workspace" in refused.content[0].text


def test_tools_count_apart(mcp_url, app, make_token):
    writer = make_token(app, "writer")[1]
    calls(mcp_url(), writer, *[(LISTING, {})] * 3)

    assert calls(mcp_url(), writer, (CREATE, {"client_name": "x"}))[0].is_error is False


def test_the_tenant_default_limits_tools_without_their_own_built_ins_included(mcp_url, app, make_token):
    actions.set_tenant_setting(app, "toolRateLimit", {"calls": 1, "per": "second"}, acting_user=None)
    reader = make_token(app, "reader")[1]
    query = ("acme_records_query", {"app": "cases", "collection": "cases"})

    results = calls(mcp_url(), reader, query, query, (ECHO, {"thing": "a"}), (ECHO, {"thing": "b"}))
    own = calls(mcp_url(), reader, *[(LISTING, {})] * 3)  # its own limit (2 a minute) wins

    assert [r.is_error for r in results] == [False, True, False, True]
    assert results[1].meta["retryAfter"] == 1
    assert [r.is_error for r in own] == [False, False, True]


def test_a_call_refused_for_bad_arguments_does_not_count(mcp_url, app, make_token):
    writer = make_token(app, "writer")[1]

    results = calls(mcp_url(), writer, *[(CREATE, {})] * 3, *[(CREATE, {"client_name": "x"})] * 2)

    assert [r.is_error for r in results] == [True, True, True, False, False]


def test_with_redis_down_calls_go_through_uncounted_with_one_warning(
    mcp_url, app, make_token, settings, monkeypatch, caplog
):
    monkeypatch.setattr(rate_counters, "_health", rate_counters._RedisHealth())
    settings.RATE_LIMIT_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    reader = make_token(app, "reader")[1]

    with caplog.at_level(logging.WARNING, logger="mcp_gateway.limits.rate_counters"):
        results = calls(mcp_url(), reader, *[(LISTING, {})] * 4)

    assert [r.is_error for r in results] == [False] * 4
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_gateway.limits.rate_counters"]
    assert len(warnings) == 1 and "unreachable" in warnings[0]


def test_looking_at_a_limit_before_asking_for_a_confirmation_counts_nothing(app):
    entry = catalog_for(app).by_name[LISTING]  # 2 calls a minute for each caller
    caller = Caller(tenant_id=app.pk, user_id=1, is_member=True)

    seen = []
    for _ in range(3):
        seen += [rate_limits.at_rate_limit(app, caller, entry), rate_limits.at_rate_limit(app, caller, entry)]
        seen.append(rate_limits.enforce_rate_limit(app, caller, entry) is not None)

    assert seen == [False, False, False, False, False, False, True, True, True]
