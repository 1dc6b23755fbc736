"""/t/<tenant>/builder/mcp through the official SDK client against the live server: an app built,
deployed, broken, diagnosed from its error, rolled back and fixed, all through MCP; and who may."""

from __future__ import annotations

import asyncio
import json

import httpx2
import mcp.types as types
import pytest
from django.conf import settings
from mcp.shared.exceptions import MCPError

from tenants.models import TenantAuditLog
from tests.mcp_gateway.conftest import mcp_client

pytestmark = pytest.mark.slow

GOOD = 'def handle(request):\n    return {"greeting": "Hello, " + request.query["name"]}\n'
BROKEN = 'def handle(request):\n    total = 0\n    return {"ratio": 1 / total}\n'


def bundle(handler: str) -> dict:
    manifest = {
        "name": "greeter",
        "routes": {"GET /hello": {"handler": "server/hello.py", "auth": "user"}},
        "mcp": {
            "tools": [
                {
                    "name": "greet",
                    "description": "Greet someone by name. Use it to check the app answers.",
                    "route": "GET /hello",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                        "additionalProperties": False,
                    },
                    "annotations": {"readOnlyHint": True, "destructiveHint": False},
                }
            ]
        },
    }
    return {"manifest": manifest, "files": {"server/hello.py": handler}}


@pytest.fixture
def urls(live_url, transactional_db, acme):
    return f"{live_url}/t/acme/builder/mcp", f"{live_url}/t/acme/mcp"


def run(coroutine):
    return asyncio.run(coroutine)


async def builder_call(url: str, token: str, tool: str, arguments: dict):
    async with mcp_client(url, token) as client:
        return await client.call_tool(tool, arguments)


async def app_call(url: str, token: str, arguments: dict):
    async with mcp_client(url, token) as client:
        return await client.call_tool("acme_greeter_greet", arguments)


def test_an_app_built_broken_diagnosed_rolled_back_and_fixed_through_mcp(urls, acme, make_token):
    builder, gateway = urls
    _, admin = make_token(acme, "admin")

    nameless = {**bundle(GOOD), "manifest": {"name": "Bad!"}}
    refused = run(builder_call(builder, admin, "validate_app", nameless))
    assert not refused.is_error and refused.structured_content["valid"] is False
    assert any(p["pointer"] == "/name" for p in refused.structured_content["problems"])

    first = run(builder_call(builder, admin, "deploy_app", bundle(GOOD)))
    assert not first.is_error, first.content
    assert first.structured_content["tools"] == [{"name": "greet", "wireName": "acme_greeter_greet"}]
    assert run(app_call(gateway, admin, {"name": "Ada"})).structured_content == {"greeting": "Hello, Ada"}

    assert run(builder_call(builder, admin, "deploy_app", bundle(BROKEN))).structured_content["version"] == 2
    failed = run(app_call(gateway, admin, {"name": "Ada"}))
    assert failed.is_error
    error_id = next(word for word in failed.content[0].text.split() if word.startswith("err_")).strip(").,")

    listed = run(builder_call(builder, admin, "list_errors", {"app": "greeter"})).structured_content
    assert listed["errors"][0]["errorId"] == error_id and listed["errors"][0]["version"] == 2
    found = run(builder_call(builder, admin, "get_error", {"errorId": error_id})).structured_content
    assert "server/hello.py" in found["trace"] and "ZeroDivisionError" in found["trace"]
    assert "/srv" not in found["trace"] and "site-packages" not in found["trace"]

    back = run(builder_call(builder, admin, "rollback_app", {"app": "greeter"})).structured_content
    assert back["version"] == 1
    assert not run(app_call(gateway, admin, {"name": "Ada"})).is_error

    source = run(builder_call(builder, admin, "get_app", {"app": "greeter", "version": 2})).structured_content
    assert source["files"]["server/hello.py"] == BROKEN and source["versions"] == [1, 2]
    assert run(builder_call(builder, admin, "get_app", {"app": "greeter", "version": 9})).is_error
    fixed = run(builder_call(builder, admin, "deploy_app", bundle(GOOD.replace("Hello", "Hi"))))
    assert fixed.structured_content["version"] == 3
    assert run(app_call(gateway, admin, {"name": "Ada"})).structured_content == {"greeting": "Hi, Ada"}

    log = TenantAuditLog.objects.for_tenant(acme).filter(target="greeter").order_by("created_at", "id")
    assert [(row.action, row.acting_user.username) for row in log] == [
        ("app.deploy", "admin"),
        ("app.deploy", "admin"),
        ("app.rollback", "admin"),
        ("app.deploy", "admin"),
    ]


def test_a_refused_deploy_answers_every_problem_with_its_pointer_and_changes_nothing(urls, acme, make_token):
    builder, _ = urls
    _, admin = make_token(acme, "admin")
    broken = bundle("def handle(:\n")
    broken["manifest"]["mcp"]["tools"][0]["route"] = "GET /nowhere"
    refused = run(builder_call(builder, admin, "deploy_app", broken))
    assert refused.is_error
    pointers = {p["pointer"] for p in refused.structured_content["problems"]}
    assert {"/mcp/tools/0/route", "/routes/GET ~1hello/handler"} <= pointers
    assert "/mcp/tools/0/route: " in refused.content[0].text
    listed = run(builder_call(builder, admin, "list_apps", {})).structured_content
    assert listed == {"apps": []}


def test_the_endpoint_lists_its_tools_resources_and_prompt(urls, acme, make_token):
    builder, _ = urls
    _, admin = make_token(acme, "admin")

    async def look():
        async with mcp_client(builder, admin) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            schema = await client.read_resource("builder://manifest-schema")
            prompt = await client.get_prompt("create_app", {"purpose": "tracks library loans"})
            preview = await client.call_tool("preview_tools", {"roles": []})
            bad_roles = await client.call_tool("preview_tools", {"roles": ["Not A Role"]})
            no_app = await client.call_tool("get_app", {"app": "nothing"})
            return tools, resources, schema, prompt, preview, bad_roles, no_app

    tools, resources, schema, prompt, preview, bad_roles, no_app = run(look())
    assert tools == [
        "validate_app",
        "deploy_app",
        "list_apps",
        "get_app",
        "rollback_app",
        "undeploy_app",
        "list_errors",
        "get_error",
        "preview_tools",
    ]
    assert resources == ["builder://manifest-schema", "builder://handler-contract", "builder://agent-guide"]
    assert json.loads(schema.contents[0].text)["properties"]["name"]
    assert "tracks library loans" in prompt.messages[0].content.text
    assert not preview.is_error and preview.structured_content["roles"] == []
    assert bad_roles.is_error and bad_roles.structured_content["problems"][0]["pointer"] == "/roles"
    assert no_app.is_error and "no app 'nothing'" in no_app.content[0].text


@pytest.mark.parametrize(
    ("who", "options", "status"),
    [("writer", {}, 403), ("admin", {"read_only": True}, 403), (None, {}, 401), ("bad", {}, 401)],
)
def test_only_tenant_admins_with_a_writing_token_get_in(urls, acme, make_token, who, options, status):
    builder, _ = urls
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if who == "bad":
        headers["Authorization"] = "Bearer lcp_nope_nope"
    elif who is not None:
        headers["Authorization"] = f"Bearer {make_token(acme, who, **options)[1]}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    answer = httpx2.post(builder, json=body, headers=headers, timeout=30)
    assert answer.status_code == status
    assert "error" in answer.json()
    if status == 401:
        assert answer.headers["www-authenticate"].startswith("Bearer ")


def test_an_unknown_tool_is_a_protocol_error(urls, acme, make_token):
    builder, _ = urls
    _, admin = make_token(acme, "admin")

    async def attempt() -> int:
        async with mcp_client(builder, admin) as client:
            try:
                await client.call_tool("drop_everything", {})
            except MCPError as err:
                return err.code
        return 0

    assert run(attempt()) == types.INVALID_PARAMS


def test_a_body_over_the_apis_limit_is_refused_before_it_is_read_whole(urls, acme, make_token):
    # The SDK's transport reads a body whole, unbounded: an admin's token could fill the replica's memory.
    builder, _ = urls
    _, admin = make_token(acme, "admin")
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {admin}",
    }
    padding = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"pad": padding}}}
    answer = httpx2.post(builder, json=body, headers=headers, timeout=30)
    assert answer.status_code == 413
    assert "request body is over" in answer.json()["error"]
    small = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert httpx2.post(builder, json=small, headers=headers, timeout=30).status_code == 200
