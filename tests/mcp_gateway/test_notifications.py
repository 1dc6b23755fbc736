"""The change notifier polls a tenant only while some session of it is listening."""

from __future__ import annotations

import gc

import anyio
import pytest

from lowcode_platform.asgi import gateway
from tests.mcp_gateway.conftest import all_tool_names, mcp_client


@pytest.fixture
def member_token(mcp_url, acme, deploy, make_token):
    deploy(acme)
    return make_token(acme, "member")[1]


async def polled_until(tenant_id: int, expected: bool) -> bool:
    """Wait (bounded) for the server to finish with a closed stream or session; returns the final state."""
    with anyio.move_on_after(10):
        while (tenant_id in gateway.notifier.polled_tenants) != expected:
            gc.collect()  # a closed session's connection may sit in a reference cycle
            await anyio.sleep(0.02)
    return tenant_id in gateway.notifier.polled_tenants


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_a_tenant_is_polled_only_while_a_session_listens(mcp_url, member_token, acme, settings, mode):
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.05

    async def main():
        async with mcp_client(mcp_url(), member_token, mode=mode) as client:
            if mode == "legacy":  # a handshake-era session is watched once it lists tools
                await all_tool_names(client)
                listening = await polled_until(acme.pk, True)
            else:
                async with client.listen(tools_list_changed=True):
                    listening = await polled_until(acme.pk, True)
                assert await polled_until(acme.pk, False) is False  # the stream ended, the session is open
        return listening, await polled_until(acme.pk, False)

    listening, after = anyio.run(main)

    assert listening is True and after is False
