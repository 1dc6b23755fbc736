"""The built-in ``search_tools``: the caller's own tools that fit what the user asked, best first.

Candidates are exactly ``catalog.visible_tools`` (what ``tools/list`` is made from, whatever the
tenant's ``toolDiscovery`` mode lists), so search can never return a tool the caller may not see and
call now; ranking is ``search_index``'s. Each returned tool is shaped by the SDK's own serializer for
the protocol version of the request, so it is exactly the caller's ``tools/list`` entry.
"""

from __future__ import annotations

from mcp.types.methods import serialize_server_result
from mcp.types.version import LATEST_HANDSHAKE_VERSION

from mcp_gateway.tools.catalog.builtins import SEARCH_LIMIT_DEFAULT
from mcp_gateway.tools.catalog.catalog import CatalogEntry, catalog_for, visible_tools
from tenants.callers import Caller
from tenants.models import Tenant


def wire_entries(entries: list[CatalogEntry], version: str) -> list[dict]:
    """``entries`` as tools/list puts them on the wire for protocol ``version``."""
    tools = [e.tool.model_dump(by_alias=True, mode="json", exclude_none=True) for e in entries]
    # The 2026-07-28 result also needs its caching fields and resultType; only "tools" is kept.
    result = {"tools": tools, "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
    return serialize_server_result("tools/list", version, result)["tools"]


def search_tools(
    tenant: Tenant,
    caller: Caller,
    args: dict,
    *,
    version: str = LATEST_HANDSHAKE_VERSION,
    ui_host: bool = False,
) -> dict:
    """The built-in tool: ``{"tools", "canSatisfyIntent", "summary", "nextSteps"}`` for ``args["query"]``.

    ``version``: the protocol version of the call (``CallContext.protocol_version``), so entries are
    shaped as that client's tools/list shapes them; elsewhere (agents, the console) the handshake
    era's latest, as the preview shows. ``ui_host``: the client shows MCP Apps views.
    """
    query = args["query"]
    limit = args.get("limit", SEARCH_LIMIT_DEFAULT)
    # The index does not hold search_tools itself, so it never answers with it.
    ranked = catalog_for(tenant).search_index.rank(
        query, visible_tools(tenant, caller, ui_host=ui_host), limit
    )
    tools = wire_entries(ranked.entries, version)
    return {
        "tools": tools,
        "canSatisfyIntent": ranked.can_satisfy,
        "summary": _summary(tools, ranked.can_satisfy),
        "nextSteps": _next_steps(tools, ranked.can_satisfy),
    }


def _label(tool: dict) -> str:
    return f"{tool['name']} ({tool['title']})" if tool.get("title") else tool["name"]


def _summary(tools: list[dict], can_satisfy: bool) -> str:
    if not tools:
        return "No tool available to you matches this request."
    if can_satisfy:
        found = f"{len(tools)} tool{'s' if len(tools) > 1 else ''} found"
        return f"{found}; the best match is {_label(tools[0])}."
    return (
        f"No tool available to you clearly does this; the {len(tools)} closest "
        f"{'are' if len(tools) > 1 else 'is'} listed, best first."
    )


def _next_steps(tools: list[dict], can_satisfy: bool) -> str:
    if can_satisfy:
        return (
            f"Call {tools[0]['name']} with arguments that match its inputSchema (any tool listed here "
            "can be called by its name), or search again with other words if it does not fit."
        )
    return (
        "Search again with other words (what the user wants to achieve, not how); if nothing fits, "
        "tell the user no available tool does this: some need a role you do not hold."
    )
