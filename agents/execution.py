"""Executing a slice of a run: from its start, or from a pause once every held call is decided.

A slice claims the run (queued to running, one conditional UPDATE), rebuilds who it acts as and
the model from the agent's definition, and drives pydantic-ai's loop with the run's limits: steps
(model requests), tool calls, tokens (the lower of the agent's limit and what the tenant's daily
budget has left) and wall time (what the run has not used yet). It ends completed, paused for
approval, cancelled or failed with a reason; never left ``running`` (a crash is the sweep's).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db.models import F
from django.utils import timezone
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import CancellationToken, DeferredToolRequests, DeferredToolResults, UsageLimits
from pydantic_ai.exceptions import (
    AgentRunError,
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    RunCancelled,
    RunTimedOut,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models import Model
from pydantic_ai.models.instrumented import InstrumentationSettings, InstrumentedModel
from pydantic_ai.tools import ToolDenied
from pydantic_ai.usage import RunUsage

from agents.budgets import tokens_left_today
from agents.callers import run_caller
from agents.exceptions import AgentError, ProviderKeyMissing
from agents.keys import decrypt_key
from agents.models import Agent, AgentRun, AgentRunStep, ProviderKey
from agents.providers import build_model, provider_endpoint
from agents.steps import StepRecorder, bounded_text
from agents.toolset import GatewayToolset
from core import tracing
from core.error_ids import error_id_note, new_error_id
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("agents.execution")
Status = AgentRun.Status
Approval = AgentRunStep.Approval
DENIED_MESSAGE = "A person denied this tool call: it did not run."


@dataclass
class Slice:
    """What one slice needs, read in the run's thread before the loop starts."""

    run: AgentRun
    agent: Agent
    tenant: Tenant
    caller: Caller
    model: Model
    history: list | None
    results: DeferredToolResults | None
    usage: RunUsage
    token_limit: int
    token_limit_is_budget: bool
    seconds_left: float
    endpoint: str = ""  # the provider's base URL, named when it cannot be reached


def claim(run_id: str) -> AgentRun | None:
    """The run, now ``running`` in this process; None when it is not queued (another took it, or it ended)."""
    now = timezone.now()
    updated = AgentRun.all_tenants.filter(run_id=run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, updated_at=now
    )
    if not updated:
        return None
    run = AgentRun.all_tenants.select_related("agent", "tenant", "user").get(run_id=run_id)
    seconds = max(run.agent.max_seconds - run.elapsed_seconds, 0) + settings.AGENT_RUN_GRACE_SECONDS
    run.deadline = now + timedelta(seconds=seconds)
    run.started_at = run.started_at or now
    run.save(update_fields=["deadline", "started_at"])
    return run


def execute_run(run_id: str, *, model: Model | None = None) -> None:
    """Run the next slice of a queued run (a no-op for one not queued).

    ``model`` replaces the provider's model (tests script it with pydantic-ai's ``FunctionModel``).
    """
    run = claim(run_id)
    if run is None:
        return
    started = time.monotonic()
    try:
        job = prepare(run, model)
    except AgentError as err:
        finish(run, Status.FAILED, reason=str(err), elapsed=time.monotonic() - started)
        return
    try:
        async_to_sync(drive)(job)
    except Exception:  # the top of a run: the run ends failed with an error id, never "running"
        error_id = new_error_id()
        logger.exception("Agent run failed: error_id=%s run=%s", error_id, run_id)
        finish(
            run,
            Status.FAILED,
            reason=f"The platform failed {error_id_note(error_id)}.",
            error_id=error_id,
            elapsed=time.monotonic() - started,
        )


def prepare(run: AgentRun, model: Model | None) -> Slice:
    """Raises: AgentError subclasses (unknown provider, missing or unreadable key, starter gone)."""
    agent, tenant = run.agent, run.tenant
    caller = run_caller(tenant, agent, run)
    base_url = ""
    if model is None:
        endpoint = provider_endpoint(agent.provider)
        base_url = endpoint.base_url
        stored = ProviderKey.objects.for_tenant(tenant).filter(provider=agent.provider).first()
        if stored is None:
            raise ProviderKeyMissing(agent.provider)
        model = build_model(endpoint, agent.model, decrypt_key(stored.encrypted_key, agent.provider))
    history = ModelMessagesTypeAdapter.validate_python(run.messages) if run.messages else None
    usage = RunUsage(
        requests=run.usage.get("requests", 0),
        tool_calls=run.usage.get("tool_calls", 0),
        input_tokens=run.usage.get("input_tokens", 0),
        output_tokens=run.usage.get("output_tokens", 0),
    )
    budget_left = tokens_left_today(tenant)
    token_limit = min(agent.max_tokens, usage.total_tokens + budget_left)
    return Slice(
        run=run,
        agent=agent,
        tenant=tenant,
        caller=caller,
        model=model,
        history=history,
        results=decided_calls(run) if history else None,
        usage=usage,
        token_limit=token_limit,
        token_limit_is_budget=token_limit < agent.max_tokens,
        seconds_left=max(agent.max_seconds - run.elapsed_seconds, 0.001),
        endpoint=base_url,
    )


def decided_calls(run: AgentRun) -> DeferredToolResults:
    """The decisions on the calls the run paused for: approved ones run now, denied ones never do."""
    results = DeferredToolResults()
    steps = AgentRunStep.objects.filter(run=run, tool_call_id__in=run.pending_calls)
    for step in steps.exclude(approval__in=[Approval.NONE, Approval.PENDING]):
        approved = step.approval == Approval.APPROVED
        results.approvals[step.tool_call_id] = True if approved else ToolDenied(DENIED_MESSAGE)
    return results


def with_model_spans(model: Model) -> Model:
    """``model`` with pydantic-ai's GenAI spans (model, token usage) when traces are on; never
    prompts, completions or tool arguments (``include_content`` off)."""
    provider = tracing.provider()
    if provider is None:
        return model
    options = InstrumentationSettings(
        tracer_provider=provider, include_content=False, include_binary_content=False
    )
    return InstrumentedModel(model, options)


async def drive(job: Slice) -> None:
    run, agent = job.run, job.agent
    recorder = await sync_to_async(StepRecorder)(run, job.caller)
    toolset = GatewayToolset(job.tenant, job.caller, agent.tools, recorder)
    framework_agent = PydanticAgent(
        with_model_spans(job.model),
        instructions=agent.instructions or None,
        output_type=[str, DeferredToolRequests],
        toolsets=[toolset],
    )
    limits = UsageLimits(
        request_limit=agent.max_steps,
        tool_calls_limit=agent.max_tool_calls,
        total_tokens_limit=job.token_limit,
    )
    token = CancellationToken()
    watcher = asyncio.create_task(_watch_for_cancel(run.pk, token))
    started = time.monotonic()
    agent_run = None
    status, reason, output, messages, error_id = Status.FAILED, "", "", None, ""
    try:
        async with framework_agent.iter(
            None if job.history else run.input,
            message_history=job.history,
            deferred_tool_results=job.results,
            usage=job.usage,
            usage_limits=limits,
            cancellation_token=token,
            timeout=job.seconds_left,
        ) as agent_run:
            # A resumed slice starts at the response it paused on: recorded already, not a new turn.
            resumed_on = job.history[-1] if job.history else None
            async for node in agent_run:
                if PydanticAgent.is_call_tools_node(node):
                    if resumed_on is not None and node.model_response == resumed_on:
                        resumed_on = None
                        continue
                    await sync_to_async(recorder.model_turn)(node.model_response, toolset.offered)
        result = agent_run.result
        assert result is not None  # the loop ran to its end node, which sets it
        messages = ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")
        if isinstance(result.output, DeferredToolRequests):
            status = Status.AWAITING_APPROVAL
            pending = [call.tool_call_id for call in result.output.approvals]
        else:
            status, output, pending = Status.COMPLETED, str(result.output), []
    except RunTimedOut:
        reason = f"Wall time limit reached: the agent may run {agent.max_seconds} s."
    except RunCancelled:
        status, reason = Status.CANCELLED, "Cancelled."
    except UsageLimitExceeded as err:
        reason = _limit_reason(str(err), agent, job)
    except ModelHTTPError as err:
        reason = f"The model provider answered HTTP {err.status_code} (model {agent.model})."
    except ModelAPIError as err:
        error_id = new_error_id()
        logger.warning("Model provider failed: error_id=%s run=%s", error_id, run.run_id, exc_info=err)
        reason = _provider_failure(err, agent, job.endpoint, error_id)
    except (UnexpectedModelBehavior, AgentRunError) as err:
        reason = bounded_text(f"The model misbehaved: {err.message}", 480)
    finally:
        watcher.cancel()
    if job.results is not None:
        approved = [call_id for call_id, decision in job.results.approvals.items() if decision is True]
        await sync_to_async(recorder.unreached)(approved)
    usage = agent_run.usage if agent_run is not None else job.usage
    await sync_to_async(finish)(
        run,
        status,
        reason=reason,
        output=output,
        error_id=error_id,
        usage=usage,
        messages=messages,
        pending=pending if status == Status.AWAITING_APPROVAL else [],
        elapsed=time.monotonic() - started,
    )


def _provider_failure(err: ModelAPIError, agent: Agent, endpoint: str, error_id: str) -> str:
    """Names the endpoint and the cause (the transport's own words: refused, timed out, name unknown)."""
    where = f"at {endpoint} " if endpoint else ""
    if isinstance(err, ModelConnectionError):
        cause: BaseException = err
        while cause.__cause__ is not None:  # the SDK's "Connection error." wraps the transport's words
            cause = cause.__cause__
        what = f"could not be reached: {type(cause).__name__}: {cause}"
    else:
        what = f"failed: {type(err).__name__}: {err.message}"
    return bounded_text(
        f"The model provider {where}{what} (model {agent.model}) {error_id_note(error_id)}.", 480
    )


def _limit_reason(message: str, agent: Agent, job: Slice) -> str:
    if "request_limit" in message:
        return f"Step limit reached: the agent may take {agent.max_steps} model steps."
    if "tool_calls_limit" in message:
        return f"Tool call limit reached: the agent may make {agent.max_tool_calls} tool calls."
    if job.token_limit_is_budget:
        return "Token budget reached: the tenant's daily agent tokens (setting agentTokensPerDay) are spent."
    return f"Token limit reached: the agent may use {agent.max_tokens} tokens."


async def _watch_for_cancel(run_pk: int, token: CancellationToken) -> None:
    """Cancel the loop once someone asks (the request may reach any process: the row says so)."""
    while True:
        await asyncio.sleep(settings.AGENT_CANCEL_POLL_SECONDS)
        requested = await sync_to_async(_cancel_requested)(run_pk)
        if requested:
            token.cancel()
            return


def _cancel_requested(run_pk: int) -> bool:
    return AgentRun.all_tenants.filter(pk=run_pk, cancel_requested=True).exists()


def finish(
    run: AgentRun,
    status: str,
    *,
    reason: str = "",
    output: str = "",
    error_id: str = "",
    usage: RunUsage | None = None,
    messages: Any = None,
    pending: list[str] | None = None,
    elapsed: float = 0,
) -> None:
    """Store the slice's end. A cancel asked during a pause-bound slice still wins: the run ends cancelled."""
    now = timezone.now()
    fields: dict[str, Any] = {
        "status": status,
        "reason": bounded_text(reason, 500),
        "output": bounded_text(output),
        "error_id": error_id,
        "updated_at": now,
        "elapsed_seconds": F("elapsed_seconds") + elapsed,
        "pending_calls": pending or [],
        "deadline": None,
    }
    if usage is not None:
        fields["usage"] = {
            "requests": usage.requests,
            "tool_calls": usage.tool_calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
        }
        fields["total_tokens"] = usage.total_tokens
    if messages is not None:
        fields["messages"] = messages
    if status in (Status.COMPLETED, Status.FAILED, Status.CANCELLED):
        fields["finished_at"] = now
    AgentRun.all_tenants.filter(pk=run.pk, status=Status.RUNNING).update(**fields)
    if status == Status.AWAITING_APPROVAL:
        # A cancel that arrived while the slice was ending: the pause becomes the end.
        AgentRun.all_tenants.filter(pk=run.pk, status=Status.AWAITING_APPROVAL, cancel_requested=True).update(
            status=Status.CANCELLED, reason="Cancelled.", finished_at=now, pending_calls=[]
        )
