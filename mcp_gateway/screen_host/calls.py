"""A screen's ``tools/call`` on the front-end path: the gateway's one tools/call, as the visitor.

The host page relays the view's ``callServerTool`` here. The call goes through ``run_call``, the
same function the MCP server calls (roles, arguments against ``inputSchema``, rate limits, output
budget, one audit row), as a client that shows MCP Apps views (so a ``visibility: ["app"]`` tool
answers). A ``confirm`` tool is asked about on the host page: the first request gets the question
(the call's own ``Asked``, from the preflight every tools/call runs), the host page's dialog puts it
to the visitor, and the second request carries the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp.types as types

from mcp_gateway.exceptions import ToolUnavailable
from mcp_gateway.tools.call.calls import run_call
from mcp_gateway.tools.call.confirmation import Confirmation, Verdict
from mcp_gateway.tools.catalog.catalog import catalog_for
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result
from tenants.callers import Caller
from tenants.models import Tenant

NO_QUESTIONS = (
    "The tool asked its caller for input, which a screen's host page cannot answer yet. Nothing more ran."
)


@dataclass(frozen=True)
class Question:
    """The call waits for the visitor's yes: ``message`` is what the host page asks."""

    message: str


def call_from_screen(
    tenant: Tenant,
    caller: Caller,
    app_name: str,
    name: str,
    arguments: dict[str, Any],
    confirmed: bool | None,
) -> types.CallToolResult | Question:
    """Call tool ``name`` of app ``app_name`` for a screen of that app, as ``caller``.

    ``confirmed``: None on the first request (a ``confirm`` tool then answers a ``Question``), else
    the visitor's answer on the host page.

    Raises:
        ToolUnavailable: not a tool of this app, or one the caller may not call.
        InternalError: the platform failed (audited ``platform_error``).
    """
    entry = catalog_for(tenant).by_name.get(name)
    if entry is None or entry.builtin is not None or entry.app_name != app_name:
        raise ToolUnavailable(name)  # a screen reaches its own app only
    # The host page shows MCP Apps views, and asks its visitor to confirm in its own dialog.
    call = CallContext(tenant, caller, ui_host=True, can_confirm=True)
    confirmation = (
        None if confirmed is None else Confirmation(Verdict.ACCEPTED if confirmed else Verdict.DECLINED)
    )
    result = run_call(call, name, arguments, confirmation)
    if isinstance(result, Asked) and result.confirms:
        return Question(result.confirmation_message)
    if isinstance(result, Asked):
        return error_result(NO_QUESTIONS)
    return result
