"""The gateway's MCP server for one caller, connected in process: the official SDK client against
the same server, authentication, tenant charge and catalog warm-up as ``/t/<tenant>/mcp``, with no
HTTP in between.

What a connection skips is what HTTP adds: the Host and Origin checks, the session ledger, the
event-stream choice per POST (progress and log notifications need a stream, so none are sent) and
the ``Mcp-*`` header checks of the 2026-07-28 wire. Protocol behaviour is tested through this; what
the HTTP layer adds keeps its end-to-end tests against a served platform.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp import Client
from starlette.types import Scope

from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.protocol.context import GatewayRequest, scope_caller, serving
from mcp_gateway.protocol.notifications import Notifier
from mcp_gateway.protocol.server import build_server
from mcp_gateway.protocol.stream_choice import warm_catalog
from mcp_gateway.transport.auth import authenticate, refusal


async def caller_of(slug: str, bearer: str) -> GatewayRequest:
    """The tenant and caller a bearer token authenticates at ``slug``'s endpoint, as for HTTP.

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint, 401 for a bad token.
    """
    scope: Scope = {"type": "http", "headers": [(b"authorization", f"Bearer {bearer}".encode())]}
    scope = await authenticate(scope, slug, origin=None)
    gw = scope_caller(scope)
    if gw is None:
        raise GatewayRefused(401, refusal(scope))
    return gw


@contextlib.asynccontextmanager
async def connect(
    slug: str, bearer: str, *, mode: str = "legacy", client_type: type[Client] = Client, **client_options: Any
) -> AsyncIterator[Client]:
    """An SDK ``Client`` (``mode`` "legacy" or a 2026 revision) connected to a fresh gateway server as
    the caller ``bearer`` authenticates at ``slug``; list-changed and subscription notifications run.
    ``client_type``: a subclass of the SDK's, for a client that declares other capabilities."""
    gw = await caller_of(slug, bearer)
    notifier = Notifier()
    # Served for the whole connection: copied into the server's tasks, which start below.
    with serving(dataclasses.replace(gw, connection=True)):
        if mode != "legacy":
            await warm_catalog(gw.tenant)  # as the HTTP transport does for the 2026 wire
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(notifier.run)
            async with client_type(build_server(notifier), mode=mode, **client_options) as client:
                yield client
            tasks.cancel_scope.cancel()
