"""Whether answering an MCP request needs an event stream: the protocol layer's rule, which the
transport (``transport.streaming``) asks per POST before the SDK reads it.

A JSON body carries only the answer: progress, log lines and a server request tied to the call
(elicitation, a handler's questions) need the stream. Reads only the cached catalog and what the
protocol layer remembers of each session: no I/O, unless the catalog must be warmed first.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp_gateway.protocol import log_levels
from mcp_gateway.protocol.asking import session_can_answer
from mcp_gateway.protocol.concurrency import TenantBusy, in_thread
from mcp_gateway.protocol.context import GatewayRequest
from mcp_gateway.tools.catalog.builtins import RUN_CODE
from mcp_gateway.tools.catalog.catalog import TenantCatalog, cached_catalog, catalog_for
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("mcp_gateway.protocol.stream_choice")


def progress_token(params: Any) -> str | int | None:
    """The ``_meta.progressToken`` of a request's params, if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def needs_stream(
    tenant: Tenant, caller: Caller, method: str, params: Any, session: str | None = None
) -> bool:
    """Whether answering this request needs an event stream: the one rule, extend it here.

    A ``tools/call`` that asked for progress or for log lines (a 2026-07-28 request's log level, or
    its handshake-era ``session``'s ``logging/setLevel``), or whose tool asks the user to confirm it
    first (elicitation travels on the call's stream), or an app tool (or ``run_code``, whose script
    may call a confirm tool) called in a handshake-era session whose client answers questions (its
    handler may ask: ``asking``). Reads only the cached catalog: no I/O.
    """
    if method != "tools/call" or not isinstance(params, dict):
        return False
    if progress_token(params) is not None or wants_logs(params, session):
        return True
    name = params.get("name")
    if not isinstance(name, str):  # a list or an object is unhashable: the SDK refuses the call itself
        return False
    catalog = cached_catalog(tenant)
    entry = catalog.by_name.get(name) if catalog is not None else None
    if entry is None or not entry.visible_to(caller):
        return False
    # A run_code script may call a confirm tool: its question travels on the run_code call's stream.
    asks = entry.builtin is None or entry.builtin == RUN_CODE
    return entry.confirm or (asks and session_can_answer(session))


async def warm_catalog(tenant: Tenant) -> TenantCatalog | None:
    """The tenant's catalog, built now if this process lacks it; None if the tenant is busy.

    Best effort: the call itself builds it anyway, or waits for the tenant's share, or is refused.
    """
    found = cached_catalog(tenant)
    if found is not None:
        return found
    try:
        return await in_thread(catalog_for, tenant)
    except TenantBusy:
        logger.debug("catalog warm-up skipped: tenant %s busy", tenant.pk)
        return None


async def wants_stream(gw: GatewayRequest | None, message: dict, session: str | None) -> bool:
    """``needs_stream`` for the authenticated caller ``gw`` of a POST carrying ``message`` in
    ``session`` (the transport's chooser asks this)."""
    if gw is None or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    if progress_token(params) is None and not wants_logs(params, session):
        await warm_catalog(gw.tenant)  # so needs_stream finds the tool's options
    return needs_stream(gw.tenant, gw.caller, "tools/call", params, session)


def wants_logs(params: Any, session: str | None) -> bool:
    return log_levels.requested_level(params) is not None or log_levels.session_level(session) is not None
