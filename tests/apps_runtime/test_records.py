"""Records as a caller: permissions, validation, filters, ordering, pagination, tenant isolation."""

import secrets

import pytest

from apps_runtime.dispatch import load_app
from apps_runtime.exceptions import PermissionDenied, RecordInvalid, RecordNotFound, RuntimeDomainError
from apps_runtime.models import Record
from apps_runtime.records import (
    CURSOR_MAX_CHARS,
    RecordsScope,
    create_record,
    delete_record,
    get_record,
    query_records,
    serialize,
    update_record,
)
from tenants.callers import caller_for
from tenants.scoping import access_user
from tests.support.apps import HANDLERS, READ, cases_manifest

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


def test_a_read_returns_what_the_orm_loads_and_only_the_scopes_row(scope_for):
    writer = scope_for("writer")
    record = create_record(writer, "cases", {"client_name": "Ada", "notes": ["ü", {"n": 1.5}]})
    row = Record.objects.for_tenant(writer.tenant_id).get(record_id=record["id"])
    # The same id in another collection of the app is another record: never the one read.
    Record.objects.create(
        tenant_id=writer.tenant_id, app_id=writer.app_id, collection="elsewhere", record_id="01SAMEID"
    )

    assert get_record(writer, "cases", record["id"]) == serialize(row) == record
    with pytest.raises(RecordNotFound):
        get_record(writer, "cases", "01SAMEID")


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


# --- The query rule: plain field names, few of them, exact scalar values (issue 10, item 2) ---

QUERY_PROBE = """
from platform_sdk import RecordsError

def handle(request):
    try:
        page = request.records.query("cases", **request.body)
    except RecordsError as err:
        return {"code": err.code, "error": err.message}, 400
    return {"names": [r["data"]["client_name"] for r in page["items"]]}
"""


@pytest.fixture
def probe(client, acme, deploy, make_token):
    """POST a query's arguments to a handler that runs ``request.records.query`` in the real sandbox."""
    routes = {**cases_manifest()["routes"], "POST /probe": {"handler": "server/probe.py", "auth": READ}}
    deploy(acme, cases_manifest(routes=routes), {**HANDLERS, "server/probe.py": QUERY_PROBE})
    loaded = load_app(acme, "cases")
    writer = RecordsScope(acme.pk, loaded.app.pk, loaded.compiled, caller_for(acme, access_user("writer")))
    create_record(writer, "cases", {"client_name": "Ada"})
    reader = make_token(acme, "reader")[1]

    def run(**arguments):
        return client.post(
            "/t/acme/apps/cases/probe",
            arguments,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {reader}",
        )

    return run


def test_a_handler_query_with_a_django_lookup_in_where_is_refused_and_never_runs(probe):
    assert probe(where={"client_name": "Ada"}).json() == {"names": ["Ada"]}
    for lookup in (
        {"client_name__regex": "^A"},
        {"client_name__regex": "(((.+)+)+)+\u0000"},
        {"client_name__startswith": "A"},
    ):
        response = probe(where=lookup)
        assert response.status_code == 400, response.content
        assert response.json()["code"] == "invalid"
        assert "is not a plain field name" in response.json()["error"]


def test_a_handler_query_ordered_by_a_lookup_or_transform_is_refused(probe):
    assert probe(order_by="-client_name").json() == {"names": ["Ada"]}
    for order_by in ("client_name__regex", "-client_name__len", "--client_name", "client_name\n"):
        response = probe(order_by=order_by)
        assert response.status_code == 400, (order_by, response.content)
        assert response.json()["code"] == "invalid"


def test_a_handler_query_with_more_where_fields_than_the_setting_is_refused(probe, settings):
    many = {f"field_{i}": "x" for i in range(21)}
    response = probe(where=many)
    assert response.status_code == 400
    assert response.json()["error"] == "where has 21 fields; at most 20 are allowed"
    settings.RECORDS_QUERY_MAX_WHERE_KEYS = 2
    three = probe(where={"a": 1, "b": 2, "c": 3})
    assert three.json()["error"] == "where has 3 fields; at most 2 are allowed"


def test_a_field_named_like_a_lookup_is_only_ever_a_json_key(scope_for):
    writer = scope_for("writer")
    create_record(writer, "cases", {"client_name": "Ada"})
    keyed = create_record(
        writer, "cases", {"client_name": "Bo", "regex": ".", "contains": "x", "isnull": True}
    )
    for where in ({"regex": "."}, {"contains": "x"}, {"isnull": True}):
        assert [r["id"] for r in query_records(writer, "cases", where=where)["items"]] == [keyed["id"]]
    assert query_records(writer, "cases", where={"regex": "A"})["items"] == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"where": {"x__regex": "a"}}, "not a plain field name"),
        ({"where": {"_": 1}}, "not a plain field name"),
        ({"where": {"0": 1}}, "not a plain field name"),
        ({"where": {"a" * 65: 1}}, "not a plain field name"),
        ({"where": {"client_name": ["Ada"]}}, "must be an exact value"),
        ({"where": {"client_name": {"$ne": 1}}}, "must be an exact value"),
        ({"where": {"client_name": "x" * 1001}}, "longer than 1000 characters"),
        ({"where": {"n": float("nan")}}, "finite number"),
        ({"where": {"client_name": "A\u0000"}}, "not text a record can hold"),
        ({"where": {"client_name": "\ud800"}}, "not text a record can hold"),
        ({"where": ["client_name"]}, "where must be an object"),
        ({"order_by": "client_name__regex"}, "not a plain field name"),
        ({"order_by": ["client_name"]}, "order_by must be a field name"),
        ({"limit": True}, "limit must be an integer"),
        ({"limit": 201}, "limit must be an integer"),
        ({"cursor": "x" * 513}, "cursor is not valid"),
    ],
)
def test_query_arguments_outside_the_rule_are_refused_naming_it(scope_for, arguments, message):
    with pytest.raises(RuntimeDomainError, match=message):
        query_records(scope_for("reader"), "cases", **arguments)


def test_the_cursor_stays_small_however_large_the_filters(scope_for):
    writer = scope_for("writer")
    data = {f"field_{i}": secrets.token_hex(500) for i in range(20)}
    for name in ("A", "B"):
        create_record(writer, "cases", {"client_name": name, **data})
    first = query_records(writer, "cases", where=data, limit=1)
    assert len(first["next_cursor"]) <= CURSOR_MAX_CHARS
    second = query_records(writer, "cases", where=data, limit=1, cursor=first["next_cursor"])
    assert [r["data"]["client_name"] for r in first["items"] + second["items"]] == ["A", "B"]
    other = {**data, "field_0": "other"}
    with pytest.raises(RuntimeDomainError, match="another query"):
        query_records(writer, "cases", where=other, limit=1, cursor=first["next_cursor"])


@pytest.mark.parametrize(
    "data",
    [
        {"client_name": "A\u0000"},
        {"client_name": "A", "k\u0000": 1},
        {"client_name": "\ud800"},
        {"client_name": "A", "n": float("nan")},
    ],
)
def test_data_some_database_cannot_store_is_refused_alike_on_every_database(scope_for, data):
    with pytest.raises(RecordInvalid):
        create_record(scope_for("writer"), "cases", data)


def test_text_that_only_looks_like_an_escaped_nul_is_kept(scope_for):
    text = "\\u0000 and \\\\u0000"  # backslashes, then "u0000": no NUL in it
    record = create_record(scope_for("writer"), "cases", {"client_name": text})
    assert get_record(scope_for("reader"), "cases", record["id"])["data"]["client_name"] == text
