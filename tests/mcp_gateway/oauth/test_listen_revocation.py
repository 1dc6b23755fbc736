"""A 2026-07-28 listen stream opened with an OAuth access token ends when its connection is revoked."""

from __future__ import annotations

import anyio
import pytest
from django.test import Client

from oauth.connections import revoke_connection
from oauth.models import Connection
from tests.mcp_gateway.conftest import mcp_client
from tests.oauth.flow import connect


@pytest.fixture
def live(mcp_url, acme, deploy, settings):
    deploy(acme)
    settings.PUBLIC_BASE_URL = mcp_url().split("/t/")[0]
    settings.MCP_NOTIFY_INTERVAL_SECONDS = 0.05
    return settings.PUBLIC_BASE_URL


def test_revoking_the_connection_ends_its_listen_stream(mcp_url, live, acme):
    token = connect(Client(), "reader").access_token
    connection = Connection.objects.for_tenant(acme).get(user__username="reader")

    async def main():
        async with mcp_client(mcp_url(), token, mode="2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                await anyio.to_thread.run_sync(
                    lambda: revoke_connection(connection, acting_user=None, reason="test")
                )
                with anyio.fail_after(10):
                    return [event async for event in subscription]  # a graceful end, nothing heard

    assert anyio.run(main) == []
