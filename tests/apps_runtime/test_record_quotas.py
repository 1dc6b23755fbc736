"""Record quotas: a size limit per record and a storage quota per tenant, on every write path."""

import importlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from apps_runtime.dispatch import load_app
from apps_runtime.models import Record, RecordUsage
from apps_runtime.record_quota import RECOUNT_AFTER, RecordLimitExceeded, record_size
from apps_runtime.records import RecordsScope, create_record, delete_record, update_record
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.support.apps import HANDLERS, WRITE, cases_manifest

pytestmark = pytest.mark.django_db

UPDATE_HANDLER = """
def handle(request):
    return request.records.update("cases", request.params["case_id"], request.body)
"""


@pytest.fixture
def app(acme, deploy):
    routes = {
        **cases_manifest()["routes"],
        "POST /cases/{case_id}/update": {"handler": "server/update.py", "auth": WRITE},
    }
    deploy(acme, cases_manifest(routes=routes), {**HANDLERS, "server/update.py": UPDATE_HANDLER})
    return acme


@pytest.fixture
def writer(app):
    loaded = load_app(app, "cases")
    return RecordsScope(app.pk, loaded.app.pk, loaded.compiled, caller_for(app, access_user("writer")))


@pytest.fixture
def post(client, app, make_token):
    """POST JSON to a route of the test app as the writer: the front-end path to a handler's writes."""
    raw = make_token(app, "writer")[1]
    return lambda path, body: client.post(
        f"/t/acme/apps/cases{path}", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )


def _record_of(size: int) -> dict:
    """Data whose compact JSON is exactly ``size`` bytes."""
    data = {"client_name": ""}
    data["client_name"] = "x" * (size - record_size(data))
    assert record_size(data) == size
    return data


def test_a_handler_creating_a_record_over_the_size_limit_gets_limit(post, settings):
    settings.RECORDS_MAX_RECORD_BYTES = 1024
    assert post("/cases", _record_of(1024)).status_code == 201
    response = post("/cases", _record_of(1025))
    assert response.status_code == 429  # LimitExceeded, the SDK error of the broker code "limit"
    assert response.json() == {"error": "record is 1.1 KiB; the limit is 1 KiB"}
    assert Record.all_tenants.count() == 1


def test_a_handler_growing_a_record_past_the_size_limit_gets_limit(post, settings):
    settings.RECORDS_MAX_RECORD_BYTES = 1024
    record_id = post("/cases", _record_of(1000)).json()["id"]
    response = post(f"/cases/{record_id}/update", {"reference": "r" * 100})
    assert response.status_code == 429
    assert "the limit is 1 KiB" in response.json()["error"]
    assert Record.all_tenants.get().size_bytes == 1000


def test_the_default_size_limit_is_256_kib(writer):
    with pytest.raises(RecordLimitExceeded, match=r"^record is 300 KiB; the limit is 256 KiB$"):
        create_record(writer, "cases", _record_of(300 * 1024))


def test_a_tenant_over_its_quota_is_refused_until_a_delete_frees_room(writer, post, settings):
    settings.RECORDS_TENANT_QUOTA_BYTES = 300
    first = create_record(writer, "cases", _record_of(100))
    create_record(writer, "cases", _record_of(100))
    create_record(writer, "cases", _record_of(100))
    with pytest.raises(RecordLimitExceeded, match="tenant record storage quota of 300 bytes reached"):
        create_record(writer, "cases", _record_of(100))
    response = post("/cases", _record_of(100))
    assert response.status_code == 429
    assert response.json()["error"].startswith("tenant record storage quota of 300 bytes reached")
    delete_record(writer, "cases", first["id"])
    assert post("/cases", _record_of(100)).status_code == 201


def test_over_quota_a_record_may_shrink_but_not_grow(writer, settings):
    record = create_record(writer, "cases", _record_of(200))
    settings.RECORDS_TENANT_QUOTA_BYTES = 100
    with pytest.raises(RecordLimitExceeded, match="quota"):
        update_record(writer, "cases", record["id"], {"reference": "more"})
    shrunk = update_record(writer, "cases", record["id"], {"client_name": "Ada"})
    assert Record.all_tenants.get(record_id=shrunk["id"]).size_bytes == record_size(shrunk["data"])


def test_the_quota_counts_each_tenant_alone(writer, make_tenant, make_member, deploy, settings):
    settings.RECORDS_TENANT_QUOTA_BYTES = 150
    create_record(writer, "cases", _record_of(100))
    other = make_tenant("other")
    make_member(other, "writer2", roles=["case_writer"])
    deploy(other)
    loaded = load_app(other, "cases")
    theirs = RecordsScope(other.pk, loaded.app.pk, loaded.compiled, caller_for(other, access_user("writer2")))
    create_record(theirs, "cases", _record_of(100))
    with pytest.raises(RecordLimitExceeded):
        create_record(writer, "cases", _record_of(100))


def test_each_record_stores_its_size_and_the_migration_backfills_old_rows(writer):
    data = {"client_name": "Zoë", "reference": "ü ✓"}
    record = create_record(writer, "cases", data)
    row = Record.all_tenants.get(record_id=record["id"])
    assert row.size_bytes == record_size(data) == len('{"client_name":"Zoë","reference":"ü ✓"}'.encode())
    Record.all_tenants.update(size_bytes=0)
    migration = importlib.import_module("apps_runtime.migrations.0003_record_size_bytes")
    state = MigrationLoader(connection).project_state(("apps_runtime", "0003_record_size_bytes"))
    migration.record_sizes(state.apps, None)
    row.refresh_from_db()
    assert row.size_bytes == record_size(data)


def _usage(tenant) -> int:
    return RecordUsage.objects.for_tenant(tenant).get().bytes


def test_the_usage_counter_follows_creates_updates_and_deletes(app, writer):
    first = create_record(writer, "cases", _record_of(100))
    second = create_record(writer, "cases", _record_of(300))
    update_record(writer, "cases", first["id"], {"client_name": "Ada"})
    delete_record(writer, "cases", second["id"])
    create_record(writer, "cases", _record_of(50))
    total = sum(Record.objects.for_tenant(app).values_list("size_bytes", flat=True))
    assert _usage(app) == total == record_size({"client_name": "Ada"}) + 50


def test_records_deleted_outside_the_records_api_free_quota_at_the_next_recount(app, writer, settings):
    settings.RECORDS_TENANT_QUOTA_BYTES = 300
    for _ in range(3):
        create_record(writer, "cases", _record_of(100))
    Record.objects.for_tenant(app).delete()  # as the admin, or an app deleted in cascade, would
    with pytest.raises(RecordLimitExceeded, match="300 bytes used"):
        create_record(writer, "cases", _record_of(100))  # counted a moment ago: not recounted yet
    RecordUsage.objects.for_tenant(app).update(counted_at=timezone.now() - RECOUNT_AFTER)
    create_record(writer, "cases", _record_of(100))
    assert _usage(app) == 100


def test_the_migration_counts_the_usage_of_tenants_with_records(app, writer):
    create_record(writer, "cases", _record_of(100))
    create_record(writer, "cases", _record_of(120))
    RecordUsage.objects.for_tenant(app).delete()
    migration = importlib.import_module("apps_runtime.migrations.0005_record_usage")
    state = MigrationLoader(connection).project_state(("apps_runtime", "0005_record_usage"))
    migration.count_usage(state.apps, None)
    assert _usage(app) == 220


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite serializes every writer, so this race cannot happen there; CI runs it on PostgreSQL",
)
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_never_take_a_tenant_past_its_quota(acme, deploy, settings):
    deploy(acme)
    loaded = load_app(acme, "cases")
    writer = RecordsScope(acme.pk, loaded.app.pk, loaded.compiled, caller_for(acme, access_user("writer")))
    create_record(writer, "cases", _record_of(100))  # the tenant's usage row exists
    settings.RECORDS_TENANT_QUOTA_BYTES = 1000

    def write(_):
        try:
            create_record(writer, "cases", _record_of(100))
            return True
        except RecordLimitExceeded:
            return False
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(write, range(24)))
    assert outcomes.count(True) == 9
    assert _usage(acme) == 1000 == sum(Record.objects.for_tenant(acme).values_list("size_bytes", flat=True))
