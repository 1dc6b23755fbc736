"""App tools through the official MCP client, in both protocol eras: calls of one app version share a warm
worker (module globals persist), and a tool whose route says ``"isolation": "call"`` gets a fresh child.
"""

from __future__ import annotations

import anyio
import pytest

from tests.mcp_gateway.conftest import mcp_client

COUNTER = "CALLS = []\n\ndef handle(request):\n    CALLS.append(1)\n    return {'calls': len(CALLS)}\n"


def manifest() -> dict:
    def tool(name: str, route: str) -> dict:
        schema = {"type": "object"}
        return {"name": name, "description": "Count calls.", "route": route, "inputSchema": schema}

    return {
        "name": "counter",
        "routes": {
            "GET /shared": {"handler": "server/count.py", "auth": "user"},
            "GET /fresh": {"handler": "server/count.py", "auth": "user", "isolation": "call"},
        },
        "mcp": {"tools": [tool("shared", "GET /shared"), tool("fresh", "GET /fresh")]},
    }


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_app_tool_calls_share_a_warm_worker_unless_the_route_isolates_each_call(
    mcp_url, acme, deploy, make_token, mode
):
    deploy(acme, manifest(), {"server/count.py": COUNTER})
    _, raw = make_token(acme, "reader")

    async def main() -> dict[str, list[int]]:
        seen: dict[str, list[int]] = {"shared": [], "fresh": []}
        async with mcp_client(mcp_url(), raw, mode=mode) as client:
            for name in ["shared", "fresh"] * 3:
                result = await client.call_tool(f"acme_counter_{name}", {})
                assert not result.is_error, result
                seen[name].append(result.structured_content["calls"])
        return seen

    assert anyio.run(main) == {"shared": [1, 2, 3], "fresh": [1, 1, 1]}
