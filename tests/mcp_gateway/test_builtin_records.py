"""The built-in records tools through the official MCP client: query rules and record quotas."""

from __future__ import annotations

import anyio
import pytest

from apps_runtime import heavy_reads
from apps_runtime.compiled import compiled_version
from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.models import App, Record
from apps_runtime.records import RecordsScope, create_record, query_records
from mcp_gateway.tools.catalog.builtins import BUILTINS
from mcp_gateway.transport.in_process import connect
from tenants.callers import caller_for
from tenants.scoping import access_user

# In process (mcp_gateway.transport.in_process): handlers read the test's rows from other threads.
pytestmark = pytest.mark.django_db(transaction=True)

CASES = {"app": "cases", "collection": "cases"}


@pytest.fixture
def calls(acme, deploy, make_token):
    """Run a list of (tool, arguments) in one MCP session as ``username``; returns the results."""
    deploy(acme)

    def run(username: str, steps: list[tuple[str, dict]], **token_options) -> list:
        raw = make_token(acme, username, **token_options)[1]

        async def main():
            async with connect("acme", raw) as client:
                return [await client.call_tool(f"acme_{tool}", arguments) for tool, arguments in steps]

        return anyio.run(main)

    return run


def _text(result) -> str:
    return "\n".join(block.text for block in result.content)


def test_a_read_only_token_cannot_run_a_regex_through_records_query(calls):
    calls("writer", [("records_create", {**CASES, "data": {"client_name": "Ada"}})])
    plain, lookup, catastrophic, lookup_order = calls(
        "reader",
        [
            ("records_query", {**CASES, "where": {"client_name": "Ada"}}),
            ("records_query", {**CASES, "where": {"client_name__regex": "^A"}}),
            ("records_query", {**CASES, "where": {"client_name__regex": "(((.+)+)+)+\u0000"}}),
            ("records_query", {**CASES, "order_by": "client_name__regex"}),
        ],
        read_only=True,
    )
    assert plain.is_error is False
    assert [r["data"] for r in plain.structured_content["items"]] == [{"client_name": "Ada"}]
    # Refused by the records rule, which says what a filter can do rather than quoting a regex.
    for refused in (lookup, catastrophic):
        assert refused.is_error is True
        assert _text(refused).startswith("where: 'client_name__regex")
        assert "is not a plain field name: filters are exact matches on field names" in _text(refused)
    assert lookup_order.is_error is True
    assert _text(lookup_order).startswith("order_by: 'client_name__regex' is not a plain field name")


def test_records_query_refuses_more_where_fields_than_the_limit(calls):
    twenty, twenty_one = calls(
        "reader",
        [
            ("records_query", {**CASES, "where": {f"field_{i}": i for i in range(20)}}),
            ("records_query", {**CASES, "where": {f"field_{i}": i for i in range(21)}}),
        ],
    )
    assert twenty.is_error is False
    assert twenty.structured_content["items"] == []
    assert twenty_one.is_error is True
    assert _text(twenty_one).startswith("Invalid arguments:\n/where: ")


def test_the_query_rule_is_in_the_advertised_input_schema(acme, deploy, make_token):
    deploy(acme)
    raw = make_token(acme, "reader")[1]

    async def main():
        async with connect("acme", raw) as client:
            return (await client.list_tools()).tools

    tool = next(t for t in anyio.run(main) if t.name == "acme_records_query")
    where = tool.input_schema["properties"]["where"]
    assert where["maxProperties"] == 20
    assert "no '__' lookups" in where["description"]
    # No JSON type arrays (some clients' schema checks warn about them): anyOf of single types.
    assert [branch["type"] for branch in where["additionalProperties"]["anyOf"]] == [
        "string",
        "number",
        "boolean",
        "null",
    ]


def test_records_create_and_update_over_the_size_limit_are_tool_errors(calls, settings):
    settings.RECORDS_MAX_RECORD_BYTES = 1024
    created, too_big = calls(
        "writer",
        [
            ("records_create", {**CASES, "data": {"client_name": "Ada"}}),
            ("records_create", {**CASES, "data": {"client_name": "x" * 2000}}),
        ],
    )
    assert created.is_error is False
    assert too_big.is_error is True
    assert _text(too_big) == "record is 2 KiB; the limit is 1 KiB"
    grow = {**CASES, "id": created.structured_content["id"], "data": {"reference": "r" * 2000}}
    (grown,) = calls("writer", [("records_update", grow)])
    assert grown.is_error is True
    assert "the limit is 1 KiB" in _text(grown)
    assert Record.all_tenants.get().data == {"client_name": "Ada"}


def test_a_tenant_over_its_quota_gets_a_tool_error_until_a_delete(calls, settings):
    settings.RECORDS_TENANT_QUOTA_BYTES = 100
    create = ("records_create", {**CASES, "data": {"client_name": "x" * 60}})  # 78 bytes as JSON
    first, second = calls("writer", [create, create])
    assert first.is_error is False
    assert second.is_error is True
    assert _text(second).startswith("tenant record storage quota of 100 bytes reached")
    deleted, third = calls(
        "writer", [("records_delete", {**CASES, "id": first.structured_content["id"]}), create]
    )
    assert deleted.is_error is False
    assert third.is_error is False


@pytest.mark.django_db
def test_the_built_in_tool_applies_the_records_rule_itself_not_only_its_schema(acme, deploy):
    deploy(acme)
    caller = caller_for(acme, access_user("reader"))
    for arguments in (
        {"where": {"client_name__regex": "^A"}},
        {"order_by": "client_name__len"},
        {"where": {f"field_{i}": i for i in range(21)}},
    ):
        with pytest.raises(RuntimeDomainError):
            BUILTINS["records_query"](acme, caller, {**CASES, **arguments})


def test_records_query_stops_reading_at_the_output_budget_and_pages_on_from_there(calls, acme):
    """Issue 26 item 8: a page of large records was loaded whole (~50 MB) before the budget cut it."""
    assert acme.setting("maxOutputTokens") == 20_000  # the default budget: ~80 KB of JSON
    big = "x" * 30_000
    calls("writer", [("records_create", {**CASES, "data": {"client_name": f"{n} {big}"}}) for n in range(8)])

    first, *rest = calls("reader", [("records_query", {**CASES, "limit": 8, "order_by": "created_at"})])
    page = first.structured_content
    assert first.is_error is False
    # Only the records that fit were read: no "truncated" cut after the fact, a cursor instead.
    assert "truncated" not in page and 1 <= len(page["items"]) < 8 and page["next_cursor"]
    seen = [item["data"]["client_name"].split()[0] for item in page["items"]]
    cursor = page["next_cursor"]
    while cursor:
        [more] = calls(
            "reader", [("records_query", {**CASES, "limit": 8, "order_by": "created_at", "cursor": cursor})]
        )
        seen += [item["data"]["client_name"].split()[0] for item in more.structured_content["items"]]
        cursor = more.structured_content["next_cursor"]
    assert seen == [str(n) for n in range(8)]  # every record once, in order


@pytest.mark.django_db
def test_large_record_reads_of_one_tenant_are_bounded_at_once(acme, deploy, settings, monkeypatch):
    settings.RECORDS_HEAVY_READ_BYTES, settings.RECORDS_HEAVY_READS_PER_TENANT = 1000, 1
    deploy(acme)
    app = App.objects.for_tenant(acme).get(name="cases")
    caller = caller_for(acme, access_user("writer"))
    scope = RecordsScope(acme.pk, app.pk, compiled_version(app.active_version), caller)
    for _ in range(2):
        create_record(scope, "cases", {"client_name": "y" * 800})
    monkeypatch.setattr(heavy_reads, "WAIT_SECONDS", 0.1)
    with heavy_reads.heavy_read(acme.pk, 10_000):  # another call of the tenant holds the one slot
        with pytest.raises(heavy_reads.HeavyReadsBusy) as busy:
            query_records(scope, "cases", limit=2)
        assert busy.value.status == 503
        assert len(query_records(scope, "cases", limit=1)["items"]) == 1  # a small read still goes


def test_records_query_refuses_a_record_over_the_output_budget_without_loading_it(calls):
    calls("writer", [("records_create", {**CASES, "data": {"client_name": "z" * 100_000}})])
    [refused] = calls("reader", [("records_query", {**CASES, "limit": 5})])
    assert refused.is_error is True
    assert "over the 80000 bytes this answer may hold" in _text(refused)
