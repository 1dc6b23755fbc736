"""The official MCP client against the live server (``live_url``, ``mcp_url``: tests/conftest.py)."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_client(
    url: str, token: str, *, mode: str = "legacy", client_type: type[Client] = Client, **kwargs
):
    """The official SDK client over Streamable HTTP, with a bearer token (``client_type``: a subclass
    of the SDK's, for a client that declares other capabilities)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0)) as http:
        async with client_type(streamable_http_client(url, http_client=http), mode=mode, **kwargs) as client:
            yield client


async def all_tool_names(client) -> list[str]:
    names, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        names += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return names


RATE_LIMIT_REDIS_URL = "redis://127.0.0.1:6379/8"


@pytest.fixture(params=["database", "redis"])
def rate_backend(request, settings, monkeypatch):
    """Rate-limit counts in the database, then in Redis; with keys of their own, as other test runs
    (on this machine, or CI jobs) may share the Redis database."""
    from mcp_gateway.limits import rate_limits

    monkeypatch.setattr(rate_limits, "KEY_PREFIX", f"rl-test-{uuid.uuid4().hex}")
    settings.RATE_LIMIT_REDIS_URL = RATE_LIMIT_REDIS_URL if request.param == "redis" else None
    return request.param
