"""Fair share of the gateway's worker pool: a tenant waits for its share before it takes a thread."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import MCPError

from apps_runtime.models import Record
from mcp_gateway.protocol.concurrency import SERVER_BUSY, shares
from tests.mcp_gateway.conftest import mcp_client

HANDLERS = {
    # Holds its thread until the test releases it (a record), or gives up well inside its time limit.
    "server/hold.py": """
import time

def handle(request):
    request.records.create("marks", {"kind": "started"})
    for _ in range(500):
        if request.records.query("marks", where={"kind": "release"}, limit=1)["items"]:
            return {"released": True}
        time.sleep(0.05)
    return {"error": "never released"}, 500
""",
    "server/release.py": """
def handle(request):
    return request.records.create("marks", {"kind": "release"}), 201
""",
    "server/ping.py": """
def handle(request):
    return {"pong": True}
""",
}
MANIFEST = {
    "name": "holder",
    "collections": {"marks": {"schema": {"type": "object"}, "read": "user", "write": "user"}},
    "routes": {
        "POST /hold": {"handler": "server/hold.py", "auth": "user", "timeoutMs": 30000},
        "POST /release": {"handler": "server/release.py", "auth": "user"},
        "GET /ping": {"handler": "server/ping.py", "auth": "user"},
    },
    "mcp": {
        "tools": [
            {
                "name": "hold",
                "description": "Wait until released.",
                "route": "POST /hold",
                "inputSchema": {"type": "object"},
            },
            {
                "name": "ping",
                "description": "Answer at once.",
                "route": "GET /ping",
                "inputSchema": {"type": "object"},
            },
        ]
    },
}


@pytest.fixture
def tenants(mcp_url, make_tenant, make_member, make_token, deploy):
    """Tenants floody and quiet, each with the holder app and a member's token."""
    made = {}
    for slug in ("floody", "quiet"):
        tenant = make_tenant(slug)
        make_member(tenant, "alice")
        deploy(tenant, MANIFEST, HANDLERS)
        made[slug] = (tenant, make_token(tenant, "alice")[1])
    return made


async def _call(url: str, token: str, name: str):
    """One tool call in its own session: the result, or the JSON-RPC error."""
    async with mcp_client(url, token) as client:
        try:
            return await client.call_tool(name, {})
        except MCPError as err:  # caught inside: the client's task group would wrap it
            return err.error


async def _until(predicate) -> None:
    with anyio.fail_after(30):
        while not await anyio.to_thread.run_sync(predicate):
            await anyio.sleep(0.05)


def test_a_tenant_at_its_share_waits_or_is_refused_while_another_tenant_is_served(
    mcp_url, live_url, tenants, settings
):
    # Three threads, two per tenant: before the fix a third held call took the last thread.
    settings.MCP_WORKER_THREADS = 3
    settings.MCP_TENANT_SHARE = 2
    settings.MCP_TENANT_QUEUE = 1
    floody, floody_token = tenants["floody"]
    _, quiet_token = tenants["quiet"]
    held = []

    def started() -> int:
        return Record.objects.for_tenant(floody).filter(data__kind="started").count()

    async def hold():
        held.append(await _call(mcp_url("floody"), floody_token, "floody_holder_hold"))

    async def main():
        async with anyio.create_task_group() as tasks:
            for n in (1, 2):
                tasks.start_soon(hold)
                await _until(lambda n=n: started() == n)
            tasks.start_soon(hold)  # over the share: waits its turn
            await _until(lambda: shares.waiting(floody.pk) == 1)

            refused = await _call(mcp_url("floody"), floody_token, "floody_holder_hold")
            with anyio.fail_after(30):
                served = await _call(mcp_url("quiet"), quiet_token, "quiet_holder_ping")

            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {floody_token}"}) as http:
                released = await http.post(f"{live_url}/t/floody/apps/holder/release", json={})
        return refused, served, released

    refused, served, released = anyio.run(main)

    assert refused.code == SERVER_BUSY  # the queue was full
    assert refused.data["errorId"].startswith("err_")
    assert served.is_error is False and served.structured_content == {"pong": True}
    assert released.status_code == 201
    assert [r.structured_content for r in held] == [{"released": True}] * 3  # the waiter ran in the end
