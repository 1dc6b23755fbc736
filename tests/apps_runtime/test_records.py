"""Records as a caller: permissions, validation, filters, ordering, pagination, tenant isolation."""

import pytest

from apps_runtime.dispatch import load_app
from apps_runtime.exceptions import PermissionDenied, RecordInvalid, RecordNotFound, RuntimeDomainError
from apps_runtime.records import (
    RecordsScope,
    create_record,
    delete_record,
    get_record,
    query_records,
    update_record,
)
from tenants.callers import caller_for
from tenants.scoping import access_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def scope_for(acme, deploy):
    deploy(acme)

    def make(username: str, tenant=acme, read_only: bool = False) -> RecordsScope:
        loaded = load_app(tenant, "cases")
        caller = caller_for(tenant, access_user(username))
        if read_only:
            caller = caller.__class__(**{**caller.__dict__, "read_only": True})
        return RecordsScope(tenant.pk, loaded.app.pk, loaded.compiled, caller)

    return make


def test_writers_write_readers_read_and_members_do_neither(scope_for):
    record = create_record(scope_for("writer"), "cases", {"client_name": "Ada"})
    assert get_record(scope_for("reader"), "cases", record["id"])["data"] == {"client_name": "Ada"}
    with pytest.raises(PermissionDenied):
        create_record(scope_for("reader"), "cases", {"client_name": "B"})
    with pytest.raises(PermissionDenied):
        get_record(scope_for("member"), "cases", record["id"])
    assert record["created_by"] == "writer"


def test_a_read_only_token_cannot_write_even_with_the_role(scope_for):
    with pytest.raises(PermissionDenied, match="read-only"):
        create_record(scope_for("writer", read_only=True), "cases", {"client_name": "A"})


def test_data_is_validated_on_create_and_on_merged_update(scope_for):
    writer = scope_for("writer")
    with pytest.raises(RecordInvalid) as invalid:
        create_record(writer, "cases", {"client_name": "", "status": "weird"})
    assert len(invalid.value.problems) == 2
    record = create_record(writer, "cases", {"client_name": "Ada", "status": "open"})
    updated = update_record(writer, "cases", record["id"], {"status": "closed"})
    assert updated["data"] == {"client_name": "Ada", "status": "closed"}
    with pytest.raises(RecordInvalid):
        update_record(writer, "cases", record["id"], {"status": "weird"})
    assert get_record(writer, "cases", record["id"])["data"]["status"] == "closed"


def test_unknown_collections_and_records_are_not_found(scope_for):
    with pytest.raises(RecordNotFound):
        get_record(scope_for("root"), "nope", "1")
    with pytest.raises(RecordNotFound):
        get_record(scope_for("root"), "cases", "01NOPE")


def test_query_filters_orders_and_pages_with_an_opaque_cursor(scope_for):
    writer = scope_for("writer")
    for name, status in [("C", "open"), ("A", "open"), ("B", "closed"), ("D", "open")]:
        create_record(writer, "cases", {"client_name": name, "status": status})
    first = query_records(writer, "cases", where={"status": "open"}, order_by="client_name", limit=2)
    assert [r["data"]["client_name"] for r in first["items"]] == ["A", "C"]
    second = query_records(
        writer,
        "cases",
        where={"status": "open"},
        order_by="client_name",
        limit=2,
        cursor=first["next_cursor"],
    )
    assert [r["data"]["client_name"] for r in second["items"]] == ["D"]
    assert second["next_cursor"] is None
    descending = query_records(writer, "cases", order_by="-client_name", limit=10)
    assert [r["data"]["client_name"] for r in descending["items"]] == ["D", "C", "B", "A"]
    with pytest.raises(RuntimeDomainError, match="another query"):
        query_records(writer, "cases", order_by="-client_name", limit=2, cursor=first["next_cursor"])
    with pytest.raises(RuntimeDomainError, match="not valid"):
        query_records(writer, "cases", cursor=first["next_cursor"][:-3] + "abc")
    with pytest.raises(RuntimeDomainError):
        query_records(writer, "cases", limit=0)
    with pytest.raises(RuntimeDomainError):
        query_records(writer, "cases", where={"a; drop": 1})


def test_another_tenants_records_are_invisible(scope_for, make_tenant, make_member, deploy):
    other = make_tenant("other")
    make_member(other, "writer2", roles=["case_writer"])
    deploy(other)
    theirs = create_record(scope_for("writer2", tenant=other), "cases", {"client_name": "Secret"})
    mine = scope_for("root")
    with pytest.raises(RecordNotFound):
        get_record(mine, "cases", theirs["id"])
    with pytest.raises(RecordNotFound):
        update_record(mine, "cases", theirs["id"], {"client_name": "x"})
    with pytest.raises(RecordNotFound):
        delete_record(mine, "cases", theirs["id"])
    assert query_records(mine, "cases")["items"] == []


def test_a_handler_cannot_reach_another_tenants_record_by_id(
    client, acme, deploy, make_tenant, make_member, make_token
):
    deploy(acme)
    other = make_tenant("other")
    make_member(other, "spy", roles=["case_reader"])
    deploy(other)
    writer = make_token(acme, "writer")[1]
    created = client.post(
        "/t/acme/apps/cases/cases",
        {"client_name": "Secret"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {writer}",
    )
    record_id = created.json()["id"]
    spy = make_token(other, "spy")[1]
    response = client.get(f"/t/other/apps/cases/cases/{record_id}", HTTP_AUTHORIZATION=f"Bearer {spy}")
    assert response.status_code == 404
    assert "Secret" not in response.content.decode()
