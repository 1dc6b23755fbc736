"""One storage quota per tenant (job bodies, task results, error records) with a share per member."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from apps_runtime.dispatch import load_app
from apps_runtime.jobs.enqueue import enqueue_run
from apps_runtime.models import HandlerError, JobRun
from apps_runtime.records import RecordsScope
from apps_runtime.retention import record_handler_error
from apps_runtime.storage_quota import StorageQuotaExceeded, check_room, used_bytes
from tenants.callers import caller_for
from tenants.scoping import access_user

from .conftest import JOB_HANDLERS, jobs_manifest

pytestmark = pytest.mark.django_db


@pytest.fixture
def scope_of(acme, deploy):
    deploy(acme, jobs_manifest(), JOB_HANDLERS)
    loaded = load_app(acme, "chores")

    def scope(username: str) -> RecordsScope:
        caller = caller_for(acme, access_user(username))
        return RecordsScope(tenant_id=acme.pk, app_id=loaded.app.pk, compiled=loaded.compiled, caller=caller)

    return scope


def _body(size: int) -> dict:
    return {"text": "x" * (size - len('{"text": ""}'))}


def test_every_kind_counts_against_the_tenant_and_the_member(acme, scope_of):
    writer = scope_of("writer")
    enqueue_run(writer, "POST /jobs/write", _body(1000))
    record_handler_error(
        tenant_id=acme.pk, error_id="err_1", kind="k", route_key="r", trace="t" * 300, member="user:other"
    )
    assert used_bytes(acme.pk, writer.caller.person_key) == (1300, 1000)
    assert used_bytes(acme.pk, "user:other") == (1300, 300)


def test_an_enqueue_checks_its_caps_and_the_quota_in_a_fixed_number_of_queries(
    scope_of, django_assert_num_queries
):
    writer = scope_of("writer")
    enqueue_run(writer, "POST /jobs/write", _body(100))
    # Four cap counts (the member's and the tenant's, per minute and unfinished), one sum per kind
    # of stored row (job bodies, error records, task results: each the tenant's and the member's),
    # and the insert.
    with django_assert_num_queries(8):
        enqueue_run(writer, "POST /jobs/write", _body(100))


def test_the_tenant_quota_is_reached_only_by_several_members_together(acme, scope_of, settings):
    settings.TENANT_STORAGE_QUOTA_BYTES, settings.TENANT_MEMBER_SHARE_PERCENT = 4000, 50  # shares: 2000
    enqueue_run(scope_of("writer"), "POST /jobs/write", _body(2000))
    with pytest.raises(StorageQuotaExceeded) as mine:
        enqueue_run(scope_of("writer"), "POST /jobs/write", _body(10))
    assert mine.value.whose == "member" and mine.value.code == "limit"
    enqueue_run(scope_of("admin"), "POST /jobs/write", _body(1500))
    with pytest.raises(StorageQuotaExceeded) as everyone:
        enqueue_run(scope_of("reader"), "POST /jobs/write", _body(600))
    assert everyone.value.whose == "tenant" and "this workspace's storage (3500 of 4000" in str(
        everyone.value
    )
    assert JobRun.objects.for_tenant(acme).count() == 2
    check_room(acme.pk, "user:nobody", 500, what="a body")  # what is left is still there to take


def test_an_error_record_keeps_text_no_database_stores_as_escapes(acme):
    record_handler_error(
        tenant_id=acme.pk,
        error_id="err_s",
        kind="k",
        route_key="r",
        trace="bad \ud800 and \x00",
        logs="\udfff",
    )
    row = HandlerError.objects.for_tenant(acme).get(error_id="err_s")
    assert (row.trace, row.logs) == ("bad \\ud800 and \\x00", "\\udfff")
    assert row.size_bytes == len(row.trace) + len(row.logs)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TENANT_MEMBER_SHARE_PERCENT", 100),
        ("TENANT_MEMBER_SHARE_PERCENT", 0),
        ("TENANT_STORAGE_QUOTA_BYTES", 10),
    ],
)
def test_share_and_quota_settings_out_of_bounds_are_refused_by_the_checks(settings, name, value):
    setattr(settings, name, value)
    with pytest.raises(SystemCheckError, match=name):
        call_command("check")
