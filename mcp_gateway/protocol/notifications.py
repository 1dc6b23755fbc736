"""Change notifications: list changes (tools, resources, prompts) and updates of subscribed resources.

Changes can come from any process (a deploy command, another replica, a handler writing records),
so the source of truth is the database: each tenant's ``state_version``, and the change markers of
subscribed resources (``resources.change_markers``: a record's update time, an app's records). One
task per server process polls the tenants that have listeners (one query per interval, plus one
per subscribed record or app) and, on a change:

- handshake-era sessions (2025-11-25 and older) that listed tools, resources or prompts get
  ``notifications/{tools,resources,prompts}/list_changed`` on their standalone stream, only when
  what *their* caller sees of that list actually differs; sessions that called
  ``resources/subscribe`` get ``notifications/resources/updated`` for their URIs;
- 2026-07-28 clients listening through ``subscriptions/listen`` get ``ToolsListChanged``,
  ``PromptsListChanged``, ``ResourcesListChanged`` and ``ResourceUpdated`` on their tenant's own
  bus, so no tenant hears about another's changes. A listen stream keeps only the resource URIs its
  caller may read: subscribing to another's URI yields nothing. Listen streams are capped and end
  after their lifetime or when their credential is revoked (``listen_streams``); each poll ends
  those first, so a revoked credential's stream hears nothing of that poll's changes.
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from django.conf import settings
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from mcp_gateway.exceptions import ResourceNotFound
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import GatewayRequest, gateway_request
from mcp_gateway.protocol.listen_streams import (
    ListenStream,
    StreamLedger,
    TooManyStreams,
    live_credentials,
    stream_limits,
)
from mcp_gateway.sdk_seams import session_connection
from mcp_gateway.tools.catalog.catalog import listed_tools
from mcp_gateway.tools.prompts.prompts import visible_prompts
from mcp_gateway.tools.resources.resources import change_markers, resource_entry, visible_resources
from tenants.callers import Caller, caller_for
from tenants.models import ApiToken, Tenant

logger = logging.getLogger("mcp_gateway.protocol.notifications")

TOOLS, RESOURCES, PROMPTS = "tools", "resources", "prompts"


@dataclass
class _Watch:
    tenant_id: int
    token_id: int | None
    shown: dict[str, list] = field(default_factory=dict)  # kind -> what the session was shown
    subscribed: set[str] = field(default_factory=set)  # resources/subscribe URIs


def shown(tenant: Tenant, caller: Caller, kind: str) -> list:
    """Exactly what ``<kind>/list`` shows this caller now (resources: static ones and templates)."""
    if kind == TOOLS:
        return [entry.tool for entry in listed_tools(tenant, caller)]
    if kind == RESOURCES:
        return [entry.listed for entry in visible_resources(tenant, caller)]
    return [entry.prompt for entry in visible_prompts(tenant, caller)]


def _caller_now(tenant: Tenant, token_id: int | None) -> Caller | None:
    token = ApiToken.objects.for_tenant(tenant).select_related("user").filter(pk=token_id).first()
    if token is None or not token.is_active:
        return None
    return caller_for(tenant, token.user, token)


def _shown_now(tenant: Tenant, token_id: int | None, kinds: list[str]) -> dict[str, list] | None:
    caller = _caller_now(tenant, token_id)
    return None if caller is None else {kind: shown(tenant, caller, kind) for kind in kinds}


def _readable(tenant: Tenant, caller: Caller, uris: list[str]) -> list[str]:
    kept = []
    for uri in uris:
        try:
            resource_entry(tenant, caller, uri)
        except ResourceNotFound:
            continue
        kept.append(uri)
    return kept


class _TenantListen:
    """Routes subscriptions/listen to the caller's tenant's bus, with only the URIs it may read."""

    def __init__(self, notifier: Notifier):
        self._notifier = notifier

    async def __call__(
        self, ctx: ServerRequestContext, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        gw = gateway_request(ctx)
        ledger = self._notifier.streams
        try:
            stream = ledger.open(gw.tenant.pk, gw.caller, stream_limits())
        except TooManyStreams as refused:
            logger.warning(
                "tenant %s: listen stream refused, %s cap of %s reached (%s)",
                gw.tenant.pk,
                refused.scope,
                refused.limit,
                refused.error_id,
            )
            raise
        try:
            params = await _only_readable(gw, params)
            return await self._notifier.listen(ctx, params, gw.tenant, stream)
        finally:
            ledger.close(stream)


async def _only_readable(
    gw: GatewayRequest, params: types.SubscriptionsListenRequestParams
) -> types.SubscriptionsListenRequestParams:
    """``params`` with only the resource URIs (the first 100) the caller may read."""
    wanted = params.notifications.resource_subscriptions
    if not wanted:
        return params
    kept = await in_thread(_readable, gw.tenant, gw.caller, [str(uri) for uri in wanted][:100])
    notifications = params.notifications.model_copy(update={"resource_subscriptions": kept or None})
    return params.model_copy(update={"notifications": notifications})


@dataclass
class _TenantBus:
    bus: InMemorySubscriptionBus
    listeners: int = 0  # open listen streams; at 0 the bus goes, and the tenant is no longer polled
    uris: Counter = field(default_factory=Counter)  # resource URIs the open streams follow


class Notifier:
    def __init__(self) -> None:
        # Keyed by the SDK connection object so a closed session drops out on its own.
        self._watches: weakref.WeakKeyDictionary[object, _Watch] = weakref.WeakKeyDictionary()
        self._buses: dict[int, _TenantBus] = {}
        self._versions: dict[int, int] = {}
        self._markers: dict[tuple[int, str], tuple] = {}  # (tenant, uri) -> its last change marker
        self.streams = StreamLedger()
        self.listen_handler = _TenantListen(self)

    async def listen(
        self,
        ctx: ServerRequestContext,
        params: types.SubscriptionsListenRequestParams,
        tenant: Tenant,
        stream: ListenStream,
    ) -> types.SubscriptionsListenResult:
        """Serve one listen stream on the tenant's own bus; changes are measured from this version on."""
        entry = self._buses.get(tenant.pk)
        if entry is None:
            entry = self._buses[tenant.pk] = _TenantBus(InMemorySubscriptionBus())
        self._versions.setdefault(tenant.pk, tenant.state_version)
        uris = [str(uri) for uri in params.notifications.resource_subscriptions or ()]
        await self._start_following(tenant, uris)
        entry.listeners += 1
        entry.uris.update(uris)
        # A handler of its own: closing it ends this stream alone, with the spec's graceful close.
        handler = stream.handler = ListenHandler(entry.bus)
        try:
            return await _served_until_cut(stream, handler, ctx, params)
        finally:
            entry.listeners -= 1
            entry.uris.subtract(uris)
            entry.uris += Counter()  # drops the URIs no stream follows any more
            if entry.listeners == 0 and self._buses.get(tenant.pk) is entry:
                del self._buses[tenant.pk]
                self._forget_unwatched()

    @property
    def polled_tenants(self) -> frozenset[int]:
        """The tenants whose changes someone is listening for now: the ones each poll reads."""
        return frozenset({w.tenant_id for w in list(self._watches.values())} | set(self._buses))

    def _followed(self, tenant_id: int) -> set[str]:
        """The resource URIs of the tenant that some session or stream follows."""
        uris = {uri for w in list(self._watches.values()) if w.tenant_id == tenant_id for uri in w.subscribed}
        bus = self._buses.get(tenant_id)
        return uris | (set(bus.uris) if bus is not None else set())

    def _forget_unwatched(self) -> None:
        polled = self.polled_tenants
        for tenant_id in [t for t in self._versions if t not in polled]:
            del self._versions[tenant_id]
        for key in [k for k in self._markers if k[0] not in polled or k[1] not in self._followed(k[0])]:
            del self._markers[key]

    async def _start_following(self, tenant: Tenant, uris: list[str]) -> None:
        """Take the current marker of newly followed URIs: changes count from now."""
        new = {uri for uri in uris if (tenant.pk, uri) not in self._markers}
        if new:
            markers = await in_thread(change_markers, tenant, new)
            for uri, marker in markers.items():
                self._markers.setdefault((tenant.pk, uri), marker)

    def _watch_of(self, ctx: ServerRequestContext, gw: GatewayRequest) -> tuple[Any, _Watch] | None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None
        connection = session_connection(ctx.session)
        if connection is None:
            return None
        watch = self._watches.get(connection)
        if watch is None:
            watch = self._watches[connection] = _Watch(gw.tenant.pk, gw.caller.token_id)
            self._versions.setdefault(gw.tenant.pk, gw.tenant.state_version)
        return connection, watch

    async def watch(self, ctx: ServerRequestContext, gw: GatewayRequest, kind: str = TOOLS) -> None:
        """Remember a handshake-era session that listed ``kind``, with what it saw."""
        found = self._watch_of(ctx, gw)
        if found is None or kind in found[1].shown:  # every page of a listing comes here; once is enough
            return
        found[1].shown[kind] = await in_thread(shown, gw.tenant, gw.caller, kind)

    async def subscribe(self, ctx: ServerRequestContext, gw: GatewayRequest, uri: str) -> None:
        """resources/subscribe of a handshake-era session.

        Raises:
            ResourceNotFound: the caller may not read ``uri``.
        """
        await in_thread(resource_entry, gw.tenant, gw.caller, uri)
        found = self._watch_of(ctx, gw)
        if found is not None:
            await self._start_following(gw.tenant, [uri])
            found[1].subscribed.add(uri)

    def unsubscribe(self, ctx: ServerRequestContext, uri: str) -> None:
        watch = self._watches.get(session_connection(ctx.session))
        if watch is not None:
            watch.subscribed.discard(uri)

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
                    logger.warning("change check still failing: %s", type(err).__name__)
                else:
                    logger.exception("change check failed")
                failing = True
            else:
                failing = False

    async def check_once(self) -> None:
        self._forget_unwatched()  # sessions that closed since the last poll
        await self._end_streams()
        tenant_ids = self.polled_tenants
        if not tenant_ids:
            return
        current = await in_thread(_versions, tenant_ids)
        for tenant_id, version in current.items():
            previous = self._versions.get(tenant_id)
            self._versions[tenant_id] = version
            changed = previous is not None and previous != version
            followed = self._followed(tenant_id)
            if not changed and not followed:
                continue
            tenant = await in_thread(Tenant.objects.filter(pk=tenant_id).first)
            if tenant is None:  # deleted: its sessions will get 404s on their next request
                continue
            if changed:
                await self._tenant_changed(tenant)
            if followed:
                await self._resources_changed(tenant, followed, redeployed=changed)

    async def _end_streams(self) -> None:
        """End the listen streams past their life, and those whose credential is no longer good."""
        self.streams.end_expired()
        token_ids, grant_ids = self.streams.credentials()
        if token_ids or grant_ids:
            live = await in_thread(live_credentials, token_ids, grant_ids)
            self.streams.end_revoked((token_ids, grant_ids), live)

    async def _tenant_changed(self, tenant: Tenant) -> None:
        if tenant.pk in self._buses:
            bus = self._buses[tenant.pk].bus
            for event in (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged()):
                await bus.publish(event)
        for connection, watch in list(self._watches.items()):
            if watch.tenant_id != tenant.pk or not watch.shown:
                continue
            now = await in_thread(_shown_now, tenant, watch.token_id, list(watch.shown))
            if now is None:
                continue
            for kind, listed in now.items():
                # Pydantic models compare by value: a rebuilt catalog with the same items is no change.
                if listed == watch.shown[kind]:
                    continue
                watch.shown[kind] = listed
                await _send(connection, kind, tenant.pk)

    async def _resources_changed(self, tenant: Tenant, followed: set[str], *, redeployed: bool) -> None:
        """Tell followers of each URI whose marker moved (every followed URI after a deploy)."""
        markers = await in_thread(change_markers, tenant, followed)
        updated = set()
        for uri, marker in markers.items():
            key = (tenant.pk, uri)
            if redeployed or self._markers.get(key, marker) != marker:
                updated.add(uri)
            self._markers[key] = marker
        if not updated:
            return
        if tenant.pk in self._buses:
            for uri in sorted(updated & set(self._buses[tenant.pk].uris)):
                await self._buses[tenant.pk].bus.publish(ResourceUpdated(uri=uri))
        for connection, watch in list(self._watches.items()):
            if watch.tenant_id == tenant.pk:
                for uri in sorted(updated & watch.subscribed):
                    await _send(connection, "updated", tenant.pk, uri)


async def _served_until_cut(
    stream: ListenStream,
    handler: ListenHandler,
    ctx: ServerRequestContext,
    params: types.SubscriptionsListenRequestParams,
) -> types.SubscriptionsListenResult:
    """Serve the stream with its ``handler`` until it ends; one told to end that has not flushed within
    the grace is cut."""
    with anyio.CancelScope() as scope:
        stream.scope = scope
        return await handler(ctx, params)
    logger.info("listen stream of tenant %s cut: not flushed after it was told to end", stream.tenant_id)
    return types.SubscriptionsListenResult()


async def _send(connection: Any, kind: str, tenant_id: int, uri: str | None = None) -> None:
    try:
        if kind == TOOLS:
            await connection.send_tool_list_changed()
        elif kind == RESOURCES:
            await connection.send_resource_list_changed()
        elif kind == PROMPTS:
            await connection.send_prompt_list_changed()
        else:
            await connection.send_resource_updated(uri)
    except Exception:  # noqa: BLE001 - the client may be gone; it will re-list on reconnect
        logger.debug("could not notify a session of tenant %s", tenant_id, exc_info=True)


def _versions(tenant_ids: frozenset[int]) -> dict[int, int]:
    return dict(Tenant.objects.filter(pk__in=tenant_ids).values_list("pk", "state_version"))
