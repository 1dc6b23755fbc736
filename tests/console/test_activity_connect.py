"""Audit, errors and job runs as tenant admins read them; Connect a client for everyone in the tenant."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps_runtime.models import App, HandlerError, JobRun
from mcp_gateway.tools.call import calls as tool_calls
from tenants import actions
from tenants.callers import caller_for

pytestmark = pytest.mark.django_db


def call_as(tenant, username: str, tool: str, arguments: dict | None = None):
    caller = caller_for(tenant, get_user_model().objects.get(username=username))
    return tool_calls.call_tool(tenant, caller, tool, arguments or {})


@pytest.fixture
def calls(acme, deploy):
    """Two calls that went well (reader, writer) and one whose handler failed (writer)."""
    deploy(acme)
    call_as(acme, "reader", "acme_collections_list")
    call_as(acme, "writer", "acme_collections_list")
    failed = call_as(acme, "writer", "acme_cases_boom")
    assert failed.is_error
    return acme


def audit_rows(client, **query) -> int:
    return client.get("/console/acme/audit/", query).content.decode().count('<td><span class="tag')


def test_the_audit_lists_every_call_newest_first(signed_in, calls):
    body = signed_in("admin").get("/console/acme/audit/").content.decode()
    assert body.index("acme_cases_boom") < body.index("acme_collections_list")
    assert audit_rows(signed_in("admin")) == 3


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ({"member": "reader"}, 1),
        ({"tool": "acme_collections_list"}, 2),
        ({"outcome": "handler_failed"}, 1),
        ({"member": "writer", "outcome": "ok"}, 1),
        ({"since": "2000-01-01T00:00"}, 3),
        ({"until": "2000-01-01T00:00"}, 0),
    ],
)
def test_the_audit_filters_by_user_tool_outcome_and_time(signed_in, calls, query, count):
    assert audit_rows(signed_in("admin"), **query) == count


def test_a_bad_audit_filter_is_a_400_not_a_crash(signed_in, calls):
    assert signed_in("admin").get("/console/acme/audit/", {"outcome": "nope"}).status_code == 400


def test_a_failed_call_links_to_its_error_with_the_tenants_own_frames(signed_in, calls):
    error = HandlerError.objects.for_tenant(calls).get()
    client = signed_in("admin")
    assert f'/console/acme/errors/{error.error_id}"' in client.get("/console/acme/audit/").content.decode()
    assert error.error_id in client.get("/console/acme/errors/").content.decode()
    body = client.get(f"/console/acme/errors/{error.error_id}").content.decode()
    assert "server/boom.py" in body and "hunter2" in body  # the tenant's own traceback, for its admins


def test_finding_an_error_by_id_opens_it(signed_in, calls):
    error = HandlerError.objects.for_tenant(calls).get()
    response = signed_in("admin").get("/console/acme/errors/", {"id": error.error_id})
    assert response["Location"] == f"/console/acme/errors/{error.error_id}"


def test_another_tenants_error_is_404(signed_in, calls, make_tenant, make_member):
    error = HandlerError.objects.for_tenant(calls).get()
    other = make_tenant("other")
    make_member(other, "boss", admin=True)
    assert signed_in("boss").get(f"/console/other/errors/{error.error_id}").status_code == 404
    assert signed_in("writer").get(f"/console/acme/errors/{error.error_id}").status_code == 404


@pytest.fixture
def runs(acme, deploy):
    deploy(acme)
    app = App.objects.for_tenant(acme).get()
    now = timezone.now()
    for index, (job, status) in enumerate([("nightly", "succeeded"), ("", "failed"), ("nightly", "queued")]):
        JobRun.objects.create(
            tenant=acme,
            app=app,
            run_id=f"run_{index}",
            version_number=1,
            job=job,
            route_key="POST /jobs/reindex",
            caller={"username": "job:cases/nightly", "roles": ["case_writer"], "is_service": True},
            status=status,
            enqueued_at=now,
            attempt_log=[{"attempt": 1, "result_status": 200}] if status == "succeeded" else [],
        )
    return acme


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, {"run_0", "run_1", "run_2"}),
        ({"job": "nightly"}, {"run_0", "run_2"}),
        ({"status": "failed"}, {"run_1"}),
    ],
)
def test_job_runs_filter_by_job_and_status(signed_in, runs, query, expected):
    body = signed_in("admin").get("/console/acme/runs/", query).content.decode()
    assert {run for run in ("run_0", "run_1", "run_2") if f"<code>{run}</code>" in body} == expected


def test_a_job_run_shows_who_it_ran_as_and_its_attempts(signed_in, runs):
    body = signed_in("admin").get("/console/acme/runs/run_0").content.decode()
    assert "job:cases/nightly" in body and "HTTP 200" in body  # the attempt, as a row
    assert signed_in("admin").get("/console/acme/runs/run_nope").status_code == 404


def test_the_audit_pages_page_by_page_keeping_the_filters(signed_in, calls, monkeypatch):
    monkeypatch.setattr("console.views.activity.PAGE_SIZE", 2)
    client = signed_in("admin")
    first = client.get("/console/acme/audit/", {"outcome": ""}).content.decode()
    assert "Page 1 of 2" in first and "?outcome=&amp;page=2" in first
    assert audit_rows(client, outcome="", page="2") == 1


def test_connect_fills_in_this_tenants_endpoint_everywhere(signed_in, acme):
    body = signed_in("reader").get("/console/acme/connect/").content.decode()
    url = "http://testserver/t/acme/mcp"
    assert body.count(url) >= 6
    assert "claude mcp add --transport http acme http://testserver/t/acme/mcp" in body
    assert "&quot;mcpServers&quot;" in body
    assert "@modelcontextprotocol/inspector --cli http://testserver/t/acme/mcp --transport http" in body
    assert "streamable_http_client" in body


def test_connect_warns_when_the_endpoint_is_off(signed_in, acme):
    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=None)
    assert "switched off" in signed_in("reader").get("/console/acme/connect/").content.decode()


def test_connect_uses_the_configured_public_address(signed_in, acme, settings):
    settings.PUBLIC_BASE_URL = "https://platform.example"
    body = signed_in("reader").get("/console/acme/connect/").content.decode()
    assert "https://platform.example/t/acme/mcp" in body and "testserver" not in body


def test_connect_says_when_the_address_is_read_off_the_request(signed_in, acme, settings):
    settings.PUBLIC_BASE_URL, settings.DEBUG = "", False
    body = signed_in("reader").get("/console/acme/connect/").content.decode()
    assert "http://testserver/t/acme/mcp" in body and "PUBLIC_BASE_URL" in body
