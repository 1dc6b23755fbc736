"""What the agents API shows: definitions, providers (never a key), runs with their steps."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agents.definitions import FIELDS
from agents.models import Agent, AgentRun, AgentRunStep


def agent_body(agent: Agent) -> dict[str, Any]:
    return {
        **{key: getattr(agent, key) for key in FIELDS},
        "created_at": agent.created_at,
        "updated_at": agent.updated_at,
    }


def step_body(step: AgentRunStep) -> dict[str, Any]:
    body: dict[str, Any] = {"index": step.index, "kind": step.kind, "text": step.text}
    if step.kind == AgentRunStep.Kind.MODEL:
        body.update(input_tokens=step.input_tokens, output_tokens=step.output_tokens)
    else:
        body.update(
            wire_name=step.wire_name,
            arguments=step.arguments,
            outcome=step.outcome,
            duration_ms=step.duration_ms,
            approval=step.approval or None,
        )
    return body


def run_summary(run: AgentRun) -> dict[str, Any]:
    return {
        "id": run.run_id,
        "agent": run.agent.name,
        "status": run.status,
        "reason": run.reason,
        "started_by": run.user.get_username() if run.user else None,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def run_body(run: AgentRun) -> dict[str, Any]:
    steps = list(run.steps.order_by("index"))
    pending = [
        s.index
        for s in steps
        if s.approval == AgentRunStep.Approval.PENDING and s.tool_call_id in run.pending_calls
    ]
    return {
        **run_summary(run),
        "input": run.input,
        "output": run.output,
        "error_id": run.error_id or None,
        "usage": run.usage or {},
        "pending_approvals": pending,
        "steps": [step_body(step) for step in steps],
    }


class AgentWriteSerializer(serializers.Serializer):
    """Documents the body; ``definitions.clean_definition`` is the rule (it refuses unknown fields)."""

    name = serializers.CharField()
    instructions = serializers.CharField(required=False, allow_blank=True)
    provider = serializers.CharField()
    model = serializers.CharField()
    tools = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    max_steps = serializers.IntegerField(required=False)
    max_tool_calls = serializers.IntegerField(required=False)
    max_tokens = serializers.IntegerField(required=False)
    max_seconds = serializers.IntegerField(required=False)
    run_as = serializers.ChoiceField(choices=Agent.RunAs.choices, required=False)
    service_roles = serializers.ListField(child=serializers.CharField(), required=False)
    runners = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="Who may run it and approve its held calls: 'user' or 'role:a,b'; '' or null (the "
        "default): tenant admins for run_as service, every member for run_as caller. Admins always may.",
    )


class ProviderKeySerializer(serializers.Serializer):
    api_key = serializers.CharField(write_only=True, trim_whitespace=True, max_length=1000)


class RunStartSerializer(serializers.Serializer):
    input = serializers.CharField(help_text="The user's message.")


class ApprovalSerializer(serializers.Serializer):
    approve = serializers.BooleanField()
