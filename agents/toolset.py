"""The agent's tools: the caller's own MCP tools, called through the gateway's one tool path.

An agent is offered exactly the entries of the caller's ``tools/list`` (``listed_tools``: roles,
``customAppsMcpTools``, ``toolDiscovery``), narrowed by the agent's selectors. In the ``search``
mode of ``toolDiscovery`` the tools a ``search_tools`` call of the run returns are offered from the
next step on, as an MCP client calls them by name once found. Each call goes through
``mcp_gateway.tools.call.calls.run_call``, the function an MCP ``tools/call`` goes through: listing,
argument checks, the as-caller route run, confirmation, output budget, rate limit and audit. The
caller carries the agent's name and the run's id, so the audit row names both.

A tool that wants the user's confirmation pauses the run (pydantic-ai's ``ApprovalRequired``):
nothing runs until a person approves the step, and then the call goes through with that yes.
"""

from __future__ import annotations

import json
import time
from typing import Any

import mcp.types as types
from asgiref.sync import sync_to_async
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets.abstract import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from agents.steps import StepRecorder
from core.error_ids import error_id_note
from mcp_gateway.exceptions import InternalError, ToolUnavailable
from mcp_gateway.tools.call.calls import run_call
from mcp_gateway.tools.call.confirmation import Confirmation, Verdict
from mcp_gateway.tools.catalog.builtins import SEARCH_TOOLS
from mcp_gateway.tools.catalog.catalog import CatalogEntry, listed_tools, visible_tools
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from tenants.callers import Caller
from tenants.models import Tenant

# Arguments are checked by the gateway against the tool's inputSchema (its problems go back to the
# model as the tool's error), so the framework only needs a JSON object.
_ANY_OBJECT = SchemaValidator(schema=core_schema.dict_schema())
APPROVED = Confirmation(Verdict.ACCEPTED)
ASKED = "Tool error: the tool asked its caller for input, which an agent run cannot give."


def selected(entry: CatalogEntry, selectors: list[str] | None) -> bool:
    """Whether the agent's selectors (None: all) take this tool: ``app:<name>`` or its wire name."""
    if selectors is None:
        return True
    return entry.wire_name in selectors or (
        entry.app_name is not None and f"app:{entry.app_name}" in selectors
    )


def offered_tools(
    tenant: Tenant, caller: Caller, selectors: list[str] | None, found: frozenset[str] = frozenset()
) -> list[CatalogEntry]:
    """The caller's ``tools/list`` entries the agent may use, in the catalog's order, and the visible
    tools in ``found`` (returned by the run's ``search_tools`` calls)."""
    listed = {entry.wire_name for entry in listed_tools(tenant, caller)}
    return [
        entry
        for entry in visible_tools(tenant, caller)
        if (entry.wire_name in listed or entry.wire_name in found) and selected(entry, selectors)
    ]


def found_tools(result: types.CallToolResult) -> set[str]:
    """The wire names a ``search_tools`` result lists (its structuredContent ``tools``)."""
    tools = (result.structured_content or {}).get("tools") if not result.is_error else None
    return (
        {t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        if tools
        else set()
    )


def model_text(result: types.CallToolResult) -> str:
    """What the model reads of a tool result: its text blocks (the JSON, for a structured result)."""
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    return f"Tool error: {text}" if result.is_error else text


class GatewayToolset(AbstractToolset[None]):
    """The caller's tools for one slice of a run (see the module docstring)."""

    def __init__(self, tenant: Tenant, caller: Caller, selectors: list[str] | None, recorder: StepRecorder):
        self.tenant, self.caller, self.selectors, self.recorder = tenant, caller, selectors, recorder
        self.offered: set[str] = set()
        self.found: set[str] = set()

    @property
    def id(self) -> str:
        return "gateway"

    async def get_tools(self, ctx: RunContext[None]) -> dict[str, ToolsetTool[None]]:
        # Read again at every step: a role or setting change applies to the run's next step.
        entries = await sync_to_async(offered_tools)(
            self.tenant, self.caller, self.selectors, frozenset(self.found)
        )
        self.offered = {entry.wire_name for entry in entries}
        return {
            entry.wire_name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=entry.wire_name,
                    description=entry.tool.description,
                    parameters_json_schema=entry.tool.input_schema,
                ),
                max_retries=2,
                args_validator=_ANY_OBJECT,
            )
            for entry in entries
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[None], tool: ToolsetTool[None]
    ) -> str:
        return await sync_to_async(self.call)(name, tool_args, ctx.tool_call_id or "", ctx.tool_call_approved)

    def call(self, name: str, arguments: dict[str, Any], tool_call_id: str, approved: bool) -> str:
        """One tool call of the model, synchronously, in the run's thread (it holds the database)."""
        confirmation: Confirmation | None = APPROVED if approved else None
        # A run can be asked for a person's approval: a ``confirm`` tool's call pauses for it.
        call = CallContext(self.tenant, self.caller, can_confirm=True)
        started = time.perf_counter()
        try:
            result = run_call(call, name, arguments, confirmation)
        except ToolUnavailable as err:
            text = f"Tool error: {err}"
        except InternalError as err:
            text = f"Tool error: the platform failed {error_id_note(err.error_id)}."
        else:
            if isinstance(result, Asked) and result.confirms:
                question = result.confirmation_message
                step = self.recorder.awaiting_approval(name, tool_call_id, arguments, question)
                raise ApprovalRequired({"step": step})
            # A handler that asks its caller questions (``request.ask``) gets no answer from an agent.
            text = model_text(result) if isinstance(result, types.CallToolResult) else ASKED
            if (
                isinstance(result, types.CallToolResult)
                and name == f"{self.tenant.mcp_prefix}_{SEARCH_TOOLS}"
            ):
                self.found |= found_tools(result)
        self.recorder.tool_call(
            name,
            tool_call_id,
            arguments,
            duration_ms=(time.perf_counter() - started) * 1000,
            approved=approved,
        )
        return text
