"""Whether a call must wait for the user's yes, and the question to put: one rule for every asker.

The MCP server asks through elicitation (``protocol/elicitation.py``); a tenant agent's run pauses
for a person's approval (``agents``). Both ask only about a call that would otherwise run: one the
caller may make, with valid arguments, under its rate limit. Any other call goes straight to
``call_tool``, which refuses it with the reason.
"""

from __future__ import annotations

from typing import Any

from mcp_gateway.exceptions import ToolUnavailable
from mcp_gateway.limits.rate_limits import at_rate_limit
from mcp_gateway.tools.arguments import argument_problems
from mcp_gateway.tools.call_context import CallContext
from mcp_gateway.tools.calls import resolve_tool
from mcp_gateway.tools.confirmation import Confirmation, Verdict, confirmation_message, needs_confirmation


def confirmation_question(
    call: CallContext, name: str, arguments: dict[str, Any]
) -> str | Confirmation | None:
    """The question for a call that would run and needs asking.

    Returns None when the call decides everything itself (no confirmation needed, or it will be
    refused anyway), ``Confirmation(NOT_ASKED)`` for a ``confirm`` tool while the tenant switched
    confirmations off, else the question text.
    """
    try:
        entry = resolve_tool(call, name)
    except ToolUnavailable:
        return None
    tenant = call.tenant
    if not entry.confirm or argument_problems(entry.validator, arguments):
        return None
    if at_rate_limit(tenant, call.caller, entry):
        return None  # the call itself refuses it as rate-limited
    if not needs_confirmation(tenant, entry):
        return Confirmation(Verdict.NOT_ASKED)
    return confirmation_message(entry, arguments)
