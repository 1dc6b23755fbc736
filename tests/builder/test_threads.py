"""Builder calls are charged to the tenant's share of the worker pool, as its MCP calls are."""

from __future__ import annotations

import anyio
import pytest

from builder.threads import in_thread
from mcp_gateway.protocol.concurrency import TenantBusy, share_limits, shares


def busy_while_the_share_is_held(settings, tenant_id: int, other_id: int) -> tuple[bool, bool]:
    """(refused for ``tenant_id``, for ``other_id``) while a call holds ``tenant_id``'s only slot."""
    settings.MCP_TENANT_SHARE, settings.MCP_TENANT_QUEUE = 1, 0

    async def attempt(tenant: int) -> bool:
        try:
            await in_thread(lambda: None, tenant_id=tenant)
        except TenantBusy:
            return True
        return False

    async def scenario() -> tuple[bool, bool]:
        await shares.acquire(tenant_id, share_limits())  # what a running call of the tenant holds
        try:
            return await attempt(tenant_id), await attempt(other_id)
        finally:
            shares.release(tenant_id)

    return anyio.run(scenario)


@pytest.mark.django_db
def test_a_tenant_with_its_share_in_use_is_told_to_retry_and_others_are_not(settings):
    assert busy_while_the_share_is_held(settings, 9101, 9102) == (True, False)


@pytest.mark.django_db
def test_a_free_share_runs_the_call(settings):
    settings.MCP_TENANT_SHARE = 1
    assert anyio.run(lambda: in_thread(lambda: 42, tenant_id=9103)) == 42
