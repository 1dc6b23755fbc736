"""The stored history of a run: one row per model turn and per tool call, written as the run goes.

The console and the SSE endpoint read these rows, so progress shows in any process. Text and
arguments are bounded here: both come from the model, and a run's history must stay small.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from agents.models import AgentRun, AgentRunStep
from mcp_gateway.audit_log import record_call
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call.approvals import hold_for_agent
from tenants.callers import Caller

TEXT_MAX = 20_000
ARGUMENTS_MAX = 10_000
Approval = AgentRunStep.Approval
NOT_OFFERED = "not offered to this agent: unknown, hidden from the caller, or outside the agent's tools"


def bounded_text(text: str, limit: int = TEXT_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded_arguments(arguments: Any) -> Any:
    """The arguments as stored: as they are, or a note of their size when too large to keep."""
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return arguments if len(text) <= ARGUMENTS_MAX else {"_omitted": f"{len(text)} characters of arguments"}


class StepRecorder:
    """Writes a run's steps, numbered from where the run's earlier slices stopped."""

    def __init__(self, run: AgentRun, caller: Caller):
        self.run, self.caller = run, caller
        last = AgentRunStep.objects.filter(run=run).order_by("-index").values_list("index", flat=True).first()
        self.next_index = 0 if last is None else last + 1

    def _add(self, **fields: Any) -> AgentRunStep:
        step = AgentRunStep.objects.create(run=self.run, index=self.next_index, **fields)
        self.next_index += 1
        return step

    def model_turn(self, response: ModelResponse, offered: set[str]) -> None:
        """A model response; a tool call of a name not offered is refused here (nothing runs) and audited."""
        text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        summary = text or ("Calls " + ", ".join(call.tool_name for call in calls) if calls else "")
        self._add(
            kind=AgentRunStep.Kind.MODEL,
            text=bounded_text(summary),
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
        )
        for call in calls:
            if call.tool_name not in offered:
                arguments = call.args_as_dict()
                # The framework answers the model that no such tool exists; the audit says who tried.
                record_call(
                    self.caller,
                    call.tool_name[:128],
                    arguments,
                    outcome=ToolCallAudit.Outcome.DENIED,
                    duration_ms=0,
                )
                self._add(
                    kind=AgentRunStep.Kind.TOOL,
                    wire_name=call.tool_name[:128],
                    tool_call_id=call.tool_call_id[:100],
                    arguments=bounded_arguments(arguments),
                    outcome=ToolCallAudit.Outcome.DENIED,
                    text=NOT_OFFERED,
                )

    def awaiting_approval(self, name: str, tool_call_id: str, arguments: dict, question: str) -> int:
        """A confirm tool's call, held for a person's decision (an approval, as any client's call
        asked out of band: ``mcp_gateway.tools.call.approvals``); returns its step number."""
        step = self._add(
            kind=AgentRunStep.Kind.TOOL,
            wire_name=name,
            tool_call_id=tool_call_id[:100],
            arguments=bounded_arguments(arguments),
            text=question,
            approval=Approval.PENDING,
        )
        hold_for_agent(self.run.tenant, self.caller, name, arguments, question, self.run.run_id, step.index)
        return step.index

    def tool_call(
        self, name: str, tool_call_id: str, arguments: dict, *, duration_ms: float, approved: bool
    ) -> None:
        """A tool call that went through the gateway: its outcome is what its audit row says."""
        outcome = (
            ToolCallAudit.objects.for_tenant(self.run.tenant_id)
            .filter(agent_run_id=self.run.run_id, wire_name=name)
            .order_by("-created_at", "-id")
            .values_list("outcome", flat=True)
            .first()
        ) or ""
        held = (
            AgentRunStep.objects.filter(
                run=self.run, tool_call_id=tool_call_id[:100], approval=Approval.APPROVED
            )
            .order_by("-index")
            .first()
            if approved
            else None
        )
        if held is not None:
            held.outcome, held.duration_ms = outcome, round(duration_ms, 3)
            held.save(update_fields=["outcome", "duration_ms"])
            return
        self._add(
            kind=AgentRunStep.Kind.TOOL,
            wire_name=name,
            tool_call_id=tool_call_id[:100],
            arguments=bounded_arguments(arguments),
            outcome=outcome,
            duration_ms=round(duration_ms, 3),
        )

    def unreached(self, approved_ids: list[str]) -> None:
        """Approved calls the resumed slice never ran: the tool left the caller's list meanwhile (a role
        or setting changed during the pause), so the framework refused it. Audited like any such call."""
        held = AgentRunStep.objects.filter(
            run=self.run, tool_call_id__in=approved_ids, approval=Approval.APPROVED, outcome=""
        )
        for step in held:
            record_call(
                self.caller,
                step.wire_name,
                step.arguments or {},
                outcome=ToolCallAudit.Outcome.DENIED,
                duration_ms=0,
            )
            step.outcome = ToolCallAudit.Outcome.DENIED
            step.text = f"{step.text}\n\n{NOT_OFFERED}".strip()
            step.save(update_fields=["outcome", "text"])
