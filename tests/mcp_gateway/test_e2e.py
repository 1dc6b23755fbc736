"""End to end: the official MCP client against a real server on a free port."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from mcp_gateway.exceptions import UNKNOWN_TOOL_HINT
from mcp_gateway.models import ToolCallAudit
from tenants import actions
from tests.mcp_gateway.conftest import all_tool_names, mcp_client
from tests.support.apps import cases_manifest
from tests.support.mcp_wire import legacy_initialize

BUILTINS = [
    "acme_collections_list",
    "acme_records_query",
    "acme_records_get",
    "acme_records_create",
    "acme_records_update",
    "acme_records_delete",
    "acme_search_tools",
    "acme_run_code",
]
# What a read-only token keeps of them (run_code too: its script's writes are refused one by one).
READ_ONLY_BUILTINS = [*BUILTINS[:3], "acme_search_tools", "acme_run_code"]
READ_TOOLS = ["acme_cases_find_case", "acme_cases_get_case"]
USER_TOOLS = ["acme_cases_fail_status", "acme_cases_boom", "acme_cases_listing", "acme_cases_bad_output"]


@pytest.fixture
def app(mcp_url, acme, deploy):
    deploy(acme)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kw: make_token(app, username, **kw)[1]


def run(fn, *args):
    return anyio.run(fn, *args)


def names_for(url, raw, mode="legacy"):
    async def main():
        async with mcp_client(url, raw, mode=mode) as client:
            return await all_tool_names(client)

    return run(main)


def call(url, raw, name, arguments, mode="legacy"):
    async def main():
        async with mcp_client(url, raw, mode=mode) as client:
            return await client.call_tool(name, arguments)

    return run(main)


def raw_post(url, raw, extra_headers=None, message=None):
    """A bare POST, to see HTTP statuses the SDK client would turn into exceptions."""
    headers = {"Authorization": f"Bearer {raw}", "Accept": "application/json, text/event-stream"}

    async def main():
        async with httpx2.AsyncClient() as http:
            return await http.post(
                url,
                headers={**headers, **(extra_headers or {})},
                json=message or {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )

    return run(main)


def call_error(url, raw, name, arguments):
    async def main():
        async with mcp_client(url, raw) as client:
            try:
                await client.call_tool(name, arguments)
            except MCPError as err:  # caught inside: the client's task group would wrap it
                return err.error
        raise AssertionError(f"{name} did not raise a JSON-RPC error")

    return run(main)


@pytest.mark.parametrize(
    ("username", "read_only", "expected"),
    [
        ("reader", False, BUILTINS + READ_TOOLS + ["acme_cases_echo"] + USER_TOOLS),
        (
            "writer",
            False,
            BUILTINS + READ_TOOLS + ["acme_cases_create_case", "acme_cases_echo"] + USER_TOOLS,
        ),
        ("member", False, BUILTINS + ["acme_cases_echo"] + USER_TOOLS),
        ("root", False, BUILTINS + READ_TOOLS + ["acme_cases_create_case", "acme_cases_echo"] + USER_TOOLS),
        ("writer", True, READ_ONLY_BUILTINS + READ_TOOLS + USER_TOOLS),
    ],
)
def test_each_caller_lists_only_the_tools_they_may_use(mcp_url, token, username, read_only, expected):
    names = names_for(mcp_url(), token(username, read_only=read_only))
    assert sorted(names) == sorted(expected)


def test_the_listing_is_in_a_fixed_order_and_carries_the_descriptors(mcp_url, token):
    raw = token("root")

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            first = (await client.list_tools()).tools
            second = (await client.list_tools()).tools
            return first, second

    first, second = run(main)
    assert [t.name for t in first] == [t.name for t in second]
    assert [t.name for t in first][: len(BUILTINS)] == BUILTINS
    find = next(t for t in first if t.name == "acme_cases_find_case")
    assert find.title == "Find Case"
    assert find.description == "Test tool find_case that calls GET /cases/search."
    assert find.input_schema["required"] == ["query"]
    assert find.annotations.read_only_hint is True and find.annotations.destructive_hint is False
    bad = next(t for t in first if t.name == "acme_cases_bad_output")
    assert bad.output_schema["properties"]["count"] == {"type": "integer"}


def test_a_tool_runs_the_route_as_the_caller_with_mapped_arguments(mcp_url, token):
    result = call(mcp_url(), token("reader"), "acme_cases_echo", {"thing": "w1", "count": 3, "tags": ["a"]})
    assert result.is_error is False
    body = result.structured_content
    assert body["params"] == {"thing": "w1"}
    assert body["body"] == {"thing": "w1", "count": 3, "tags": ["a"]}
    assert body["query"] == {"thing": "w1", "count": 3}
    assert body["tool"] == {
        "name": "acme_cases_echo",
        "arguments": {"thing": "w1", "count": 3, "tags": ["a"]},
    }
    assert body["user"]["username"] == "reader"
    assert result.content[0].text.startswith("{")


def test_records_written_through_tools_are_read_back_by_others(mcp_url, token):
    created = call(mcp_url(), token("writer"), "acme_cases_create_case", {"client_name": "Ada Lovelace"})
    assert created.is_error is False
    found = call(mcp_url(), token("reader"), "acme_cases_find_case", {"query": "lovelace"})
    assert found.structured_content == {"result": [{"client_name": "Ada Lovelace"}]}


def test_non_object_results_are_wrapped(mcp_url, token):
    result = call(mcp_url(), token("reader"), "acme_cases_listing", {})
    assert result.structured_content == {"result": [1, 2, 3]}
    assert result.content[0].text == '{"result":[1,2,3]}'


def test_bad_arguments_come_back_as_a_tool_error_listing_each_problem(mcp_url, token, app):
    result = call(mcp_url(), token("reader"), "acme_cases_echo", {"count": "three", "extra": 1})
    assert result.is_error is True
    text = result.content[0].text
    assert "/count: 'three' is not of type 'integer'" in text
    assert "'thing' is a required property" in text
    assert "Additional properties are not allowed" in text
    assert ToolCallAudit.objects.for_tenant(app).get().outcome == "invalid_arguments"


def test_handler_statuses_of_400_and_more_are_tool_errors_with_the_handler_message(mcp_url, token):
    result = call(mcp_url(), token("reader"), "acme_cases_fail_status", {"code": "409"})
    assert result.is_error is True
    assert result.content[0].text == "status 409 on purpose"


def test_handler_failures_are_tool_errors_with_an_error_id_only(mcp_url, token, app):
    result = call(mcp_url(), token("reader"), "acme_cases_boom", {})
    assert result.is_error is True
    text = result.content[0].text
    assert "err_" in text and "hunter2" not in text and "/srv/host" not in text
    audit = ToolCallAudit.objects.for_tenant(app).get()
    assert audit.outcome == "handler_failed" and audit.error_id in text
    assert f"A tenant admin reads what happened at /api/tenants/acme/errors/{audit.error_id} or" in text
    assert audit.app_version == 1 and len(audit.arguments_sha256) == 64


def test_results_breaking_the_output_schema_become_tool_errors(mcp_url, token):
    result = call(mcp_url(), token("reader"), "acme_cases_bad_output", {})
    assert result.is_error is True
    assert "outputSchema" in result.content[0].text and "/count" in result.content[0].text


def test_hidden_and_unknown_tools_are_invalid_params(mcp_url, token):
    hidden = call_error(mcp_url(), token("member"), "acme_cases_find_case", {"query": "ab"})
    unknown = call_error(mcp_url(), token("member"), "acme_nope", {})
    assert hidden.code == unknown.code == INVALID_PARAMS
    assert hidden.message == f"Unknown tool: acme_cases_find_case. {UNKNOWN_TOOL_HINT}"
    assert unknown.message == f"Unknown tool: acme_nope. {UNKNOWN_TOOL_HINT}"  # alike: nothing leaks


def test_built_in_tools_use_the_callers_permissions(mcp_url, token):
    created = call(
        mcp_url(),
        token("writer"),
        "acme_records_create",
        {"app": "cases", "collection": "cases", "data": {"client_name": "X"}},
    )
    assert created.is_error is False
    denied = call(mcp_url(), token("member"), "acme_records_query", {"app": "cases", "collection": "cases"})
    assert denied.is_error is True
    listed = call(mcp_url(), token("reader"), "acme_collections_list", {})
    assert listed.structured_content["apps"][0]["collections"][0]["name"] == "cases"


def test_tokens_of_other_tenants_are_refused_with_401(
    mcp_url, token, make_tenant, make_member, make_token, settings
):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    other = make_tenant("other")
    make_member(other, "bob")
    _, raw = make_token(other, "bob")

    response = raw_post(mcp_url(), raw)
    assert response.status_code == 401
    assert 'resource_metadata="' in response.headers["www-authenticate"]


def test_protected_resource_metadata_is_advertised(mcp_url, app, settings):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)

    async def main():
        async with httpx2.AsyncClient() as http:
            return await http.get(mcp_url().replace("/t/", "/.well-known/oauth-protected-resource/t/"))

    response = run(main)
    assert response.status_code == 200
    assert response.json()["resource"] == mcp_url()


def test_switching_the_mcp_server_off_answers_404_saying_so(mcp_url, token, app):
    raw = token("reader")
    actions.set_tenant_setting(app, "mcpServer", False, acting_user=None)

    response = raw_post(mcp_url(), raw)
    assert response.status_code == 404
    assert "switched off" in response.json()["error"]


def test_switching_app_tools_off_keeps_builtins_and_front_ends(mcp_url, token, app, client):
    raw = token("reader")
    actions.set_tenant_setting(app, "customAppsMcpTools", False, acting_user=None)
    assert names_for(mcp_url(), raw) == BUILTINS
    error = call_error(mcp_url(), raw, "acme_cases_find_case", {"query": "ab"})
    assert error.code == INVALID_PARAMS and "switched off" in error.message
    front = client.get("/t/acme/apps/cases/cases/search?query=ab", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert front.status_code == 200


def test_pagination_walks_every_page(mcp_url, token, settings):
    settings.MCP_PAGE_SIZE = 4
    raw = token("root")

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            first = await client.list_tools()
            return first, await all_tool_names(client)

    first, names = run(main)
    assert len(first.tools) == 4 and first.next_cursor
    assert len(names) == len(set(names)) == 16


def test_a_bad_cursor_is_invalid_params(mcp_url, token):
    raw = token("root")

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            try:
                await client.list_tools(cursor="garbage")
            except MCPError as err:
                return err.error
        raise AssertionError("a bad cursor was accepted")

    assert run(main).code == INVALID_PARAMS


def test_a_redeploy_is_seen_without_a_restart(mcp_url, token, app, deploy):
    raw = token("reader")
    assert "acme_cases_listing" in names_for(mcp_url(), raw)
    manifest = cases_manifest()
    manifest["mcp"]["tools"] = [t for t in manifest["mcp"]["tools"] if t["name"] != "listing"]
    deploy(app, manifest)
    assert "acme_cases_listing" not in names_for(mcp_url(), raw)


def test_list_changed_reaches_an_open_session_when_the_callers_tools_change(mcp_url, token, app, settings):
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.1
    raw = token("member")
    changed = anyio.Event()

    async def on_message(message):
        if getattr(getattr(message, "root", message), "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def main():
        async with mcp_client(mcp_url(), raw, message_handler=on_message) as client:
            before = await all_tool_names(client)
            await anyio.to_thread.run_sync(
                lambda: actions.add_member(app, "member", roles=["case_reader"], acting_user=None)
            )
            with anyio.fail_after(10):
                await changed.wait()
            return before, await all_tool_names(client)

    before, after = run(main)
    assert "acme_cases_find_case" not in before and "acme_cases_find_case" in after


def test_2026_clients_list_call_and_hear_of_changes(mcp_url, token, app, settings):
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.1
    raw = token("member")

    async def main():
        async with mcp_client(mcp_url(), raw, mode="2026-07-28") as client:
            assert client.protocol_version == "2026-07-28"
            before = await all_tool_names(client)
            result = await client.call_tool("acme_cases_listing", {})
            echoed = await client.call_tool("acme_cases_echo", {"thing": "modern", "count": 2})
            bad = await client.call_tool("acme_cases_echo", {"count": "two"})
            assert echoed.structured_content["params"] == {"thing": "modern"}
            assert bad.is_error and "'thing' is a required property" in bad.content[0].text
            async with client.listen(tools_list_changed=True) as subscription:
                await anyio.to_thread.run_sync(
                    lambda: actions.add_member(app, "member", roles=["case_reader"], acting_user=None)
                )
                with anyio.fail_after(10):
                    async for _event in subscription:
                        break
            return before, result, await all_tool_names(client)

    before, result, after = run(main)
    assert result.structured_content == {"result": [1, 2, 3]}
    assert "acme_cases_find_case" not in before and "acme_cases_find_case" in after


def test_tenant_admins_read_the_audit_and_others_cannot(mcp_url, token, api_client):
    call(mcp_url(), token("reader"), "acme_cases_listing", {})
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token('admin')}")
    rows = api_client.get("/api/tenants/acme/audit").json()["results"]
    assert [(r["wire_name"], r["outcome"], r["username"]) for r in rows] == [
        ("acme_cases_listing", "ok", "reader")
    ]
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token('reader')}")
    assert api_client.get("/api/tenants/acme/audit").status_code == 403


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("Origin", "http://evil.example", 403), ("Host", "evil.example", 421)],
)
def test_foreign_origins_and_hosts_are_refused(mcp_url, token, header, value, status):
    response = raw_post(mcp_url(), token("reader"), {header: value}, legacy_initialize())
    assert response.status_code == status
