"""The step-up of a narrowed connection: which scope a POST's ``tools/call`` needs that its
connection does not carry, so the transport answers 403 ``insufficient_scope`` before dispatch (the
MCP authorization spec's step-up). The rule itself is ``tools.catalog.needed_scope``."""

from __future__ import annotations

from mcp_gateway.protocol.context import GatewayRequest
from mcp_gateway.protocol.stream_choice import warm_catalog
from mcp_gateway.tools.catalog.catalog import needed_scope


async def missing_scope(gw: GatewayRequest | None, message: dict) -> str | None:
    """The scope a ``tools/call`` in ``message`` needs that ``gw``'s connection lacks, or None."""
    if gw is None or gw.caller.apps is None or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if not isinstance(name, str):
        return None
    catalog = await warm_catalog(gw.tenant)
    entry = catalog.by_name.get(name) if catalog is not None else None
    return needed_scope(entry, gw.caller) if entry is not None else None
