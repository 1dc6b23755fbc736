"""Runs as the API and the console see them: start, read, cancel, decide a held call, sweep.

Who starts a run: a member the agent's ``runners`` rule allows (``agents.runners``). Who sees a
run: the member who started it, the tenant's admins and platform superusers (one error,
``RunNotFound``, for "missing" and "not yours"). The same people cancel it and deny its held
calls; approving one also takes the rule, asked again at the time of the approval.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from ulid import ULID

from agents import queue
from agents.budgets import check_budget
from agents.callers import audit_caller
from agents.exceptions import (
    AgentError,
    NoPendingApproval,
    NotARunner,
    ProviderKeyMissing,
    RunFinished,
    RunNotFound,
)
from agents.models import Agent, AgentRun, AgentRunStep, ProviderKey
from agents.providers import provider_endpoint
from agents.runners import describe_runners, may_run, rule_allows
from mcp_gateway.audit_log import record_call
from mcp_gateway.models import Approval as HeldApproval
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call.approvals import record_agent_decision
from tenants.authority import is_tenant_admin
from tenants.callers import caller_for
from tenants.models import Tenant

logger = logging.getLogger("agents.runs")
Status = AgentRun.Status
Approval = AgentRunStep.Approval
INPUT_MAX = 20_000


class NotAMemberOfTenant(AgentError):
    status, code = 403, "permission_denied"

    def __init__(self) -> None:
        super().__init__("only members of this tenant may run its agents")


class InvalidInput(AgentError):
    code = "invalid_input"

    def __init__(self) -> None:
        super().__init__(f"input: the user's message, a non-empty string of at most {INPUT_MAX} characters")


def start_run(tenant: Tenant, agent: Agent, user: AbstractBaseUser, message: object) -> AgentRun:
    """Queue a run of ``agent`` on the member's message; its first slice starts once this commits.

    Raises:
        InvalidInput: no message, or too long.
        NotAMemberOfTenant: ``user`` is not a member (nor a superuser).
        NotARunner: a member the agent's ``runners`` rule leaves out.
        UnknownProvider: the operator no longer lists the agent's provider.
        ProviderKeyMissing: the tenant stored no key for it.
        BudgetExhausted: the tenant's daily runs or tokens are spent.
    """
    if not isinstance(message, str) or not message.strip() or len(message) > INPUT_MAX:
        raise InvalidInput()
    caller = caller_for(tenant, user)
    if not caller.is_member and not caller.is_superuser:
        raise NotAMemberOfTenant()
    if not rule_allows(agent, caller):
        raise NotARunner(agent.name, describe_runners(agent))
    provider_endpoint(agent.provider)
    if not ProviderKey.objects.for_tenant(tenant).filter(provider=agent.provider).exists():
        raise ProviderKeyMissing(agent.provider)
    with transaction.atomic():
        check_budget(tenant)
        run = AgentRun.objects.create(
            tenant=tenant, agent=agent, user=user, input=message, run_id=f"arun_{ULID()}"
        )
        queue.send_on_commit(run.run_id)
    return run


def access_run(tenant: Tenant, agent: Agent, run_id: str, user: AbstractBaseUser) -> AgentRun:
    """The run, if ``user`` may see it. Raises: RunNotFound (missing or not theirs, alike)."""
    run = AgentRun.objects.for_tenant(tenant).filter(agent=agent, run_id=run_id).first()
    if run is None or (run.user_id != user.pk and not is_tenant_admin(tenant, user)):
        raise RunNotFound(run_id)
    catch_up(run)
    return run


def visible_runs(tenant: Tenant, agent: Agent, user: AbstractBaseUser, limit: int = 50) -> list[AgentRun]:
    """The newest runs of the agent ``user`` may see: their own, or all for admins."""
    runs = AgentRun.objects.for_tenant(tenant).filter(agent=agent).order_by("-created_at")
    if not is_tenant_admin(tenant, user):
        runs = runs.filter(user_id=user.pk)
    return list(runs[:limit])


def cancel_run(run: AgentRun, user: AbstractBaseUser) -> AgentRun:
    """Cancel the run: at once when it is queued or paused, at its next step when it is running.

    Raises:
        RunFinished: it already ended.
    """
    now = timezone.now()
    AgentRun.all_tenants.filter(pk=run.pk, status__in=[Status.QUEUED, Status.AWAITING_APPROVAL]).update(
        status=Status.CANCELLED,
        reason="Cancelled.",
        finished_at=now,
        updated_at=now,
        cancel_requested=True,
        pending_calls=[],
    )
    AgentRun.all_tenants.filter(pk=run.pk, status=Status.RUNNING).update(
        cancel_requested=True, updated_at=now
    )
    run.refresh_from_db()
    if run.finished and run.status != Status.CANCELLED:
        raise RunFinished(run.run_id, run.status)
    return run


def decide(run: AgentRun, step_index: int, approve: bool, user: AbstractBaseUser) -> AgentRun:
    """Approve or deny a held tool call; once every held call is decided, the run goes on.

    A denied call never runs: its audit row says ``declined``, and the model is told it was denied.

    Raises:
        NotARunner: an approval by a member the agent's ``runners`` rule leaves out.
        RunFinished: the run already ended.
        NoPendingApproval: that step is not a call waiting for a decision.
    """
    if approve and not may_run(run.tenant, run.agent, user):
        raise NotARunner(run.agent.name, describe_runners(run.agent), doing="approve calls of")
    with transaction.atomic():
        locked = (
            # Lock the run's row only: PostgreSQL refuses FOR UPDATE on the nullable side of the user join.
            AgentRun.all_tenants.select_for_update(of=("self",))
            .select_related("agent", "tenant", "user")
            .get(pk=run.pk)
        )
        if locked.finished:
            raise RunFinished(locked.run_id, locked.status)
        step = AgentRunStep.objects.filter(
            run=locked, index=step_index, approval=Approval.PENDING, tool_call_id__in=locked.pending_calls
        ).first()
        if step is None or locked.status != Status.AWAITING_APPROVAL:
            raise NoPendingApproval(locked.run_id, step_index)
        record_agent_decision(locked.run_id, locked.tenant_id, step_index, user, approve)
        step.approval = Approval.APPROVED if approve else Approval.DENIED
        step.decided_by = cast(User, user)  # the platform's user model
        fields = ["approval", "decided_by"]
        if not approve:
            step.outcome = ToolCallAudit.Outcome.DECLINED
            fields.append("outcome")
            caller = audit_caller(locked.agent, locked)
            record_call(
                caller,
                step.wire_name,
                step.arguments or {},
                outcome=ToolCallAudit.Outcome.DECLINED,
                duration_ms=0,
            )
        step.save(update_fields=fields)
        undecided = AgentRunStep.objects.filter(
            run=locked, tool_call_id__in=locked.pending_calls, approval=Approval.PENDING
        ).exists()
        if not undecided:
            locked.status = Status.QUEUED
            locked.updated_at = timezone.now()
            locked.save(update_fields=["status", "updated_at"])
            queue.send_on_commit(locked.run_id)
    run.refresh_from_db()
    return run


def decide_held(approval: HeldApproval, user: AbstractBaseUser, approve: bool) -> None:
    """``decide`` for a held call's approval decided in the console or the approvals API
    (registered with ``mcp_gateway.tools.call.approvals`` in ``AgentsConfig.ready``)."""
    if approval.agent_step is None:  # registered for agents' held calls, which always have a step
        raise ValueError(f"approval {approval.pk} is not an agent's held call")
    run = AgentRun.objects.for_tenant(approval.tenant_id).select_related("agent", "tenant", "user")
    decide(run.get(run_id=approval.agent_run_id), approval.agent_step, approve, user)


def catch_up(run: AgentRun) -> None:
    """A run whose process died: a queued one is sent again, a running one past its deadline fails.

    The sweep does the same for every tenant each minute; a caller reading the run need not wait.
    """
    now = timezone.now()
    if run.status == Status.RUNNING and run.deadline is not None and run.deadline < now:
        _fail_lost(AgentRun.all_tenants.filter(pk=run.pk), now)
        run.refresh_from_db()
    elif run.status == Status.QUEUED and run.updated_at < now - timedelta(
        seconds=settings.AGENT_RUN_RESEND_SECONDS
    ):
        if AgentRun.all_tenants.filter(pk=run.pk, status=Status.QUEUED, updated_at=run.updated_at).update(
            updated_at=now
        ):
            queue.send_on_commit(run.run_id)


LOST_REASON = "The run was lost with the process running it (it stopped past its time limit)."


def _fail_lost(runs: QuerySet[AgentRun], now: datetime) -> int:
    return runs.filter(status=Status.RUNNING, deadline__lt=now).update(
        status=Status.FAILED, reason=LOST_REASON, finished_at=now, updated_at=now, deadline=None
    )


def sweep() -> dict:
    """Fail lost runs (running past their deadline) and send forgotten queued runs again, in every tenant."""
    now = timezone.now()
    lost = _fail_lost(AgentRun.all_tenants.all(), now)
    stale = now - timedelta(seconds=settings.AGENT_RUN_RESEND_SECONDS)
    forgotten = list(
        AgentRun.all_tenants.filter(status=Status.QUEUED, updated_at__lt=stale).values_list(
            "run_id", flat=True
        )[:100]
    )
    AgentRun.all_tenants.filter(run_id__in=forgotten).update(updated_at=now)
    for run_id in forgotten:
        queue.send_on_commit(run_id)
    return {"lost": lost, "resent": len(forgotten)}
