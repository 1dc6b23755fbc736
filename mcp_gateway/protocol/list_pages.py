"""tools/list pages kept in the shape the SDK puts on the wire, so a big catalog lists fast.

The SDK checks every result against the protocol version's schema before sending it, about 2 ms
per 100 tools; a tenant of 5,000 tools pays that on each of its 50 pages, on every listing. A page
depends only on the tenant's catalog (one state version), on what the caller's view of it depends
on (``catalog.view_key``), on the tenant's ``toolDiscovery`` mode, on the cursor, on the protocol
version and on the page size. So the first answer of each is kept, already checked and shaped, with
the catalog, and goes when the tenant's state moves on.
"""

from __future__ import annotations

import logging

from django.conf import settings
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types.methods import validate_client_request
from pydantic import ValidationError

from mcp_gateway.protocol.context import GatewayRequest, gateway_request
from mcp_gateway.protocol.notifications import Notifier
from mcp_gateway.sdk_seams import initialize_accepted
from mcp_gateway.tools.catalog.catalog import TenantCatalog, cached_catalog, view_key
from mcp_gateway.tools.pipeline.client_features import shows_ui

logger = logging.getLogger("mcp_gateway.protocol.list_pages")

METHOD = "tools/list"
# Pages kept per catalog (views x cursors x protocol versions): bounds a tenant's memory.
MAX_PAGES = 2048


class ListPages:
    """Server middleware: answer tools/list from kept pages, and keep the pages the handler makes."""

    def __init__(self, notifier: Notifier):
        self._notifier = notifier

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        if ctx.method != METHOD or ctx.request_id is None:
            return await call_next(ctx)
        gw = gateway_request(ctx)
        key = _page_key(ctx, gw)
        catalog = cached_catalog(gw.tenant)
        if key is not None and catalog is not None and key in catalog.pages and sdk_would_serve(ctx, METHOD):
            await self._notifier.watch(ctx, gw)
            return catalog.pages[key]
        result = await call_next(ctx)
        catalog = cached_catalog(gw.tenant)  # the handler built it if it was missing
        if key is not None and catalog is not None and isinstance(result, dict):
            _keep(catalog, key, result)
        return result


def _page_key(ctx: ServerRequestContext, gw: GatewayRequest) -> tuple | None:
    params = ctx.params or {}
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        return None  # the SDK refuses it as invalid params: nothing to keep
    session = getattr(ctx, "session", None)  # as ``context.call_context`` reads it
    ui_host = shows_ui(session.client_capabilities if session is not None else None)
    view = view_key(gw.caller, app_tools=gw.tenant.switch("customAppsMcpTools"), ui_host=ui_host)
    discovery = (gw.tenant.setting("toolDiscovery"), gw.tenant.setting("codeMode"))
    return (view, discovery, cursor, ctx.protocol_version, settings.MCP_PAGE_SIZE)


def sdk_would_serve(ctx: ServerRequestContext, method: str) -> bool:
    """What the SDK checks before a handler runs: the handshake is done and the params are well formed.

    A middleware that answers a spec method itself asks this first.
    """
    if not _handshake_done(ctx):
        return False
    try:
        validate_client_request(method, ctx.protocol_version, ctx.params)
    except (ValidationError, KeyError, ValueError):
        return False  # let the SDK answer it the way it answers a bad request
    return True


def _handshake_done(ctx: ServerRequestContext) -> bool:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return True  # no handshake: every request carries its own envelope
    return initialize_accepted(ctx.session)


def _keep(catalog: TenantCatalog, key: tuple, page: dict) -> None:
    if len(catalog.pages) >= MAX_PAGES:
        logger.info("tenant %s: %d tools/list pages kept, starting over", catalog.tenant_id, MAX_PAGES)
        catalog.pages.clear()
    catalog.pages[key] = page
