"""Issue 26 item 6: storage outside records is bounded: error records, task results, job runs and
audit rows have per-tenant caps and a retention period, purged by ``manage.py purge_expired``."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from oauth2_provider.models import Application

from apps_runtime.models import App, HandlerError, JobRun
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.runs import execute_task
from mcp_gateway.models import ToolCallAudit, ToolTask
from oauth.models import Connection
from tenants.callers import caller_for_token
from tenants.models import TenantAuditLog
from tests.support.task_app import TASK_FILES, task_manifest

pytestmark = pytest.mark.django_db

BOOM = {"name": "fails", "routes": {"GET /boom": {"handler": "server/boom.py", "auth": "public"}}}
BOOM_FILES = {"server/boom.py": "def handle(request):\n    raise RuntimeError('x' * 20000)\n"}


def test_a_tenant_keeps_only_its_newest_error_records_as_they_are_written(
    client, acme, make_tenant, deploy, settings, make_token
):
    """200 failing calls stored 14.9 MB: now a tenant holds at most RETENTION_ERRORS_PER_TENANT, and
    each member (anonymous callers together are one) at most their share of it (issue 35)."""
    settings.RETENTION_ERRORS_PER_TENANT, settings.TENANT_MEMBER_SHARE_PERCENT = 3, 50
    other = make_tenant("other")
    deploy(acme, BOOM, BOOM_FILES)
    deploy(other, BOOM, BOOM_FILES)
    client.get("/t/other/apps/fails/boom")

    def fail(username: str | None = None) -> str:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {make_token(acme, username)[1]}"} if username else {}
        return client.get("/t/acme/apps/fails/boom", **headers).json()["errorId"]

    anonymous = [fail() for _ in range(3)]
    assert set(HandlerError.objects.for_tenant(acme).values_list("error_id", flat=True)) == {anonymous[-1]}
    members = [fail(username) for username in ("reader", "writer", "admin")]

    kept = set(HandlerError.objects.for_tenant(acme).values_list("error_id", flat=True))
    assert kept == set(members)  # the tenant's cap: the oldest (anonymous) went
    assert HandlerError.objects.for_tenant(other).count() == 1  # another tenant's are its own


def _old(model, rows, days: float, field: str = "created_at") -> None:
    model.all_tenants.filter(pk__in=[r.pk for r in rows]).update(
        **{field: timezone.now() - timedelta(days=days)}
    )


def test_purge_expired_deletes_what_is_past_its_retention_or_over_its_cap(acme, deploy, settings, make_token):
    settings.RETENTION_AUDIT_ROWS_PER_TENANT = 2
    deploy(acme, BOOM, BOOM_FILES)
    app = App.objects.for_tenant(acme).get(name="fails")
    errors = [
        HandlerError.objects.create(
            tenant=acme, app=app, error_id=f"err_{n}", kind="k", route_key="GET /boom"
        )
        for n in range(2)
    ]
    _old(HandlerError, errors[:1], 15)
    run = {"tenant": acme, "app": app, "version_number": 1, "route_key": "GET /boom", "caller": {}}
    finished = JobRun.objects.create(run_id="run_old", status="succeeded", finished_at=timezone.now(), **run)
    queued = JobRun.objects.create(run_id="run_queued", status="queued", **run)
    _old(JobRun, [finished], 15, "finished_at")
    _old(JobRun, [queued], 30, "enqueued_at")
    audits = [
        ToolCallAudit.objects.create(tenant=acme, wire_name=f"t{n}", outcome="ok", duration_ms=1)
        for n in range(4)
    ]
    _old(ToolCallAudit, audits[:1], 91)
    changes = TenantAuditLog.objects.for_tenant(acme).count()
    unused = Application.objects.create(
        name="unused",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://client.example/cb",
        registration_source="dcr",
    )
    used = Application.objects.create(
        name="used",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://client.example/cb",
        registration_source="dcr",
    )
    Connection.objects.create(
        tenant=acme, user=get_user_model().objects.get(username="reader"), application=used
    )
    Application.objects.filter(pk__in=[unused.pk, used.pk]).update(
        created=timezone.now() - timedelta(hours=25)
    )

    out = StringIO()
    call_command("purge_expired", stdout=out)
    counts = json.loads(out.getvalue())

    assert list(HandlerError.objects.for_tenant(acme).values_list("error_id", flat=True)) == ["err_1"]
    assert list(JobRun.objects.for_tenant(acme).values_list("run_id", flat=True)) == ["run_queued"]
    assert sorted(ToolCallAudit.objects.for_tenant(acme).values_list("wire_name", flat=True)) == ["t2", "t3"]
    assert TenantAuditLog.objects.for_tenant(acme).count() == min(changes, 2)
    assert list(Application.objects.values_list("name", flat=True)) == ["used"]
    assert counts["handler_errors"] == 1 and counts["job_runs"] == 1 and counts["oauth_clients"] == 1
    assert counts["tool_call_audit"] == 2


def test_a_task_result_over_the_tenants_storage_quota_is_not_kept(acme, deploy, make_token, settings):
    """Results of 0.9 MB were kept 24 hours, 22 MB in 5 s: a tenant's kept results are bounded in all
    (with job bodies and error records: one storage quota, ``TENANT_STORAGE_QUOTA_BYTES``)."""
    deploy(acme, task_manifest(), TASK_FILES)
    caller = caller_for_token(acme, make_token(acme, "reader")[1])
    wire = f"{acme.mcp_prefix}_reports_slow_report"
    first = task_store.create(acme, caller, wire, {"seconds": 0, "label": "a" * 2000}, None)
    execute_task(first.task_id)
    kept = ToolTask.all_tenants.get(pk=first.pk)
    assert kept.status == "completed" and kept.result_bytes > 2000
    settings.TENANT_STORAGE_QUOTA_BYTES = 2 * kept.result_bytes + 1000
    settings.TENANT_MEMBER_SHARE_PERCENT = 50  # one member alone reaches their share first

    second = task_store.create(acme, caller, wire, {"seconds": 0, "label": "b" * 2000}, None)
    execute_task(second.task_id)
    refused = ToolTask.all_tenants.get(pk=second.pk)
    assert refused.status == "failed" and refused.result_bytes < 1000
    assert "would pass your share of this workspace's storage" in refused.result["content"][0]["text"]
