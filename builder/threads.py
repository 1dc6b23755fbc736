"""The builder's one way from async code to the ORM: the gateway's ``in_thread``, charged to the tenant.

A builder call takes one of the tenant's slots of the worker pool (``MCP_TENANT_SHARE``, with its
bounded queue and wait), the same share its MCP calls use: one tenant's agent validating and
deploying (which compiles handler code) cannot take every worker thread. A full share answers
JSON-RPC ``SERVER_BUSY`` with a retry time (``TenantBusy``), as on the tenant's MCP endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp_gateway.protocol.concurrency import in_thread_for

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any, tenant_id: int | None = None) -> T:
    """``fn(*args)`` in a worker thread with Django's connection hygiene; with ``tenant_id``, within
    that tenant's share.

    Raises:
        TenantBusy: the tenant's share is in use and its queue is full or too slow.
    """
    return await in_thread_for(tenant_id, fn, *args)
