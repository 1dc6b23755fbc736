"""tools/list_changed: tell open clients when the tools their caller sees have changed.

Changes can come from any process (a deploy command, another replica), so the source of truth is
each tenant's ``state_version`` in the database. One task per server process polls the versions of
the tenants that have listeners (one query per interval) and, on a change:

- handshake-era sessions (2025-11-25 and older) that listed tools get
  ``notifications/tools/list_changed`` on their standalone stream, only when the tool list of
  *their* caller actually differs;
- 2026-07-28 clients listening through ``subscriptions/listen`` get ``ToolsListChanged`` on their
  tenant's own bus, so no tenant hears about another's changes.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass

import anyio
import mcp.types as types
from django.conf import settings
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import GatewayRequest, gateway_request
from mcp_gateway.tools.catalog import listed_tools
from tenants.callers import Caller, caller_for
from tenants.models import ApiToken, Tenant

logger = logging.getLogger("mcp_gateway.protocol.notifications")


@dataclass
class _Watch:
    tenant_id: int
    token_id: int | None
    tools: list[types.Tool]  # what the session was shown; the catalog's own objects, not copies


def shown_tools(tenant: Tenant, caller: Caller) -> list[types.Tool]:
    """Exactly what tools/list shows this caller now."""
    return [entry.tool for entry in listed_tools(tenant, caller)]


def _tools_now(tenant: Tenant, token_id: int | None) -> list[types.Tool] | None:
    token = ApiToken.objects.for_tenant(tenant).select_related("user").filter(pk=token_id).first()
    if token is None or not token.is_active:
        return None
    return shown_tools(tenant, caller_for(tenant, token.user, token))


class _TenantListen:
    """Routes subscriptions/listen to the caller's tenant's bus."""

    def __init__(self, notifier: Notifier):
        self._notifier = notifier

    async def __call__(self, ctx: ServerRequestContext, params: types.SubscriptionsListenRequestParams):
        return await self._notifier.listen(ctx, params, gateway_request(ctx).tenant)


@dataclass
class _TenantBus:
    bus: InMemorySubscriptionBus
    handler: ListenHandler
    listeners: int = 0  # open listen streams; at 0 the bus goes, and the tenant is no longer polled


class Notifier:
    def __init__(self) -> None:
        # Keyed by the SDK connection object so a closed session drops out on its own.
        self._watches: weakref.WeakKeyDictionary[object, _Watch] = weakref.WeakKeyDictionary()
        self._buses: dict[int, _TenantBus] = {}
        self._versions: dict[int, int] = {}
        self.listen_handler = _TenantListen(self)

    async def listen(
        self, ctx: ServerRequestContext, params: types.SubscriptionsListenRequestParams, tenant: Tenant
    ) -> types.SubscriptionsListenResult:
        """Serve one listen stream on the tenant's own bus; changes are measured from this version on."""
        entry = self._buses.get(tenant.pk)
        if entry is None:
            bus = InMemorySubscriptionBus()
            entry = self._buses[tenant.pk] = _TenantBus(bus, ListenHandler(bus))
        self._versions.setdefault(tenant.pk, tenant.state_version)
        entry.listeners += 1
        try:
            return await entry.handler(ctx, params)
        finally:
            entry.listeners -= 1
            if entry.listeners == 0 and self._buses.get(tenant.pk) is entry:
                del self._buses[tenant.pk]
                self._forget_unwatched()

    @property
    def polled_tenants(self) -> frozenset[int]:
        """The tenants whose changes someone is listening for now: the ones each poll reads."""
        return frozenset({w.tenant_id for w in list(self._watches.values())} | set(self._buses))

    def _forget_unwatched(self) -> None:
        polled = self.polled_tenants
        for tenant_id in [t for t in self._versions if t not in polled]:
            del self._versions[tenant_id]

    async def watch(self, ctx: ServerRequestContext, gw: GatewayRequest) -> None:
        """Remember a handshake-era session that listed tools, with what it saw."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        connection = getattr(ctx.session, "_connection", None)  # the SDK keeps no public handle
        if connection is None:
            return
        if connection in self._watches:  # every page of a listing comes here; one watch is enough
            return
        tools = await in_thread(shown_tools, gw.tenant, gw.caller)
        self._watches[connection] = _Watch(gw.tenant.pk, gw.caller.token_id, tools)
        self._versions.setdefault(gw.tenant.pk, gw.tenant.state_version)

    async def run(self) -> None:
        """Poll for changes until cancelled."""
        failing = False
        while True:
            await anyio.sleep(settings.MCP_NOTIFY_INTERVAL_SECONDS)
            try:
                await self.check_once()
            except Exception as err:  # noqa: BLE001 - a failed poll must not end notifications for good
                # The traceback once per outage, not every interval: a database that is down for a
                # minute would otherwise flood the log (and, on CPython 3.11, formatting tracebacks
                # parses source with ast, which is not thread-safe: gh-106905).
                if failing:
                    logger.warning("tool list change check still failing: %s", type(err).__name__)
                else:
                    logger.exception("tool list change check failed")
                failing = True
            else:
                failing = False

    async def check_once(self) -> None:
        self._forget_unwatched()  # sessions that closed since the last poll
        tenant_ids = self.polled_tenants
        if not tenant_ids:
            return
        current = await in_thread(_versions, tenant_ids)
        for tenant_id, version in current.items():
            previous = self._versions.get(tenant_id)
            self._versions[tenant_id] = version
            if previous is not None and previous != version:
                await self._tenant_changed(tenant_id)

    async def _tenant_changed(self, tenant_id: int) -> None:
        if tenant_id in self._buses:
            await self._buses[tenant_id].bus.publish(ToolsListChanged())
        tenant = await in_thread(Tenant.objects.filter(pk=tenant_id).first)
        if tenant is None:  # deleted: its sessions will get 404s on their next request
            return
        for connection, watch in list(self._watches.items()):
            if watch.tenant_id != tenant_id:
                continue
            tools = await in_thread(_tools_now, tenant, watch.token_id)
            # Pydantic models compare by value: a rebuilt catalog with the same tools is no change.
            if tools is None or tools == watch.tools:
                continue
            watch.tools = tools
            try:
                await connection.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - the client may be gone; it will re-list on reconnect
                logger.debug("could not notify a session of tenant %s", tenant_id, exc_info=True)


def _versions(tenant_ids: frozenset[int]) -> dict[int, int]:
    return dict(Tenant.objects.filter(pk__in=tenant_ids).values_list("pk", "state_version"))
