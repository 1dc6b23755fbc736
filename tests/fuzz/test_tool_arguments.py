"""Arguments of every JSON shape for every listed tool, built-ins included, against a live gateway."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import strategies as fz
from tests.fuzz.bar import assert_clean_answer, assert_still_serving
from tests.fuzz.profile import fuzz_settings
from tests.support import mcp_wire as wire

pytestmark = pytest.mark.slow

CALLERS = ["root", "writer", "reader", "member", "readonly"]
APPS = st.sampled_from(["cases", "nope", ""]) | fz.json_values
COLLECTIONS = st.sampled_from(["cases", "nope", ""]) | fz.json_values


def call(served, who: str, name: str, arguments) -> None:
    message = wire.request("tools/call", {"name": name, "arguments": arguments})
    body = wire.encode(message)
    response = wire.post(served.mcp_url, body, wire.modern_headers(served.tokens[who], message))
    assert_clean_answer(response, body)
    assert_still_serving(served.platform, served.mcp_url, served.tokens["reader"])


@fuzz_settings(max_examples=80)
@given(data=st.data(), who=st.sampled_from(CALLERS))
def test_every_listed_tool_answers_arguments_of_any_shape_cleanly(served, tool_schemas, data, who):
    name = data.draw(st.sampled_from(sorted(tool_schemas)), label="tool")
    arguments = data.draw(fz.arguments_for(tool_schemas[name]), label="arguments")
    call(served, who, name, arguments)


@fuzz_settings(max_examples=60)
@given(
    who=st.sampled_from(CALLERS),
    app=APPS,
    collection=COLLECTIONS,
    where=fz.where_clauses,
    order_by=fz.order_bys,
    limit=st.integers(-5, 300) | fz.json_values,
    cursor=fz.cursors,
    keep=st.sets(st.sampled_from(["where", "order_by", "limit", "cursor"])),
)
def test_records_query_answers_any_where_and_order_by_cleanly(
    served, who, app, collection, where, order_by, limit, cursor, keep
):
    arguments = {"app": app, "collection": collection}
    optional = {"where": where, "order_by": order_by, "limit": limit, "cursor": cursor}
    arguments.update({key: value for key, value in optional.items() if key in keep})
    call(served, who, "acme_records_query", arguments)


@fuzz_settings(max_examples=40)
@given(
    who=st.sampled_from(CALLERS),
    tool=st.sampled_from(["create", "update", "get", "delete"]),
    app=APPS,
    collection=COLLECTIONS,
    record_id=st.sampled_from(["", "0", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "../x", "a" * 500]) | fz.json_values,
    data=fz.json_values
    | st.fixed_dictionaries({"client_name": fz.json_values}, optional={"status": fz.json_values}),
)
def test_record_writes_answer_any_ids_and_data_cleanly(served, who, tool, app, collection, record_id, data):
    arguments = {"app": app, "collection": collection, "id": record_id, "data": data}
    if tool == "create":
        del arguments["id"]
    if tool in ("get", "delete"):
        del arguments["data"]
    call(served, who, f"acme_records_{tool}", arguments)
