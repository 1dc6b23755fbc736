"""A real server (uvicorn on a free port, in a thread) and the official MCP client against it."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(app) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port, in a thread; yields its base URL."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    thread = threading.Thread(target=server.run, name="live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the live server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_url(django_db_setup, django_db_blocker):
    from django.conf import settings

    from lowcode_platform.asgi import application

    settings.JOBS_IN_PROCESS_CLOCK = False  # tests tick the scheduler themselves
    with served(application) as url:
        yield url
    _drop_server_connections(django_db_blocker)


def _drop_server_connections(django_db_blocker) -> None:
    """The server's worker threads may still hold connections; the test database can't be dropped then."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def mcp_url(live_url, transactional_db):
    return lambda slug="acme": f"{live_url}/t/{slug}/mcp"


@asynccontextmanager
async def mcp_client(url: str, token: str, *, mode: str = "legacy", **kwargs):
    """The official SDK client over Streamable HTTP, with a bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, **kwargs) as client:
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
