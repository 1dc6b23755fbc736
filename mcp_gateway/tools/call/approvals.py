"""Approval out of band: a ``confirm`` tool's call from a client that cannot be asked waits for a
person's decision in the console or the API, then runs once.

The one policy (who may see and decide, four-eyes, expiry, run once) for every caller that cannot be
asked in the call itself: MCP clients without elicitation, the console, screens; ``tools.calls.
preflight`` consults ``gate`` once per call. The call an approval lets run is the same credential's
(``Caller.credential_key``) same tool with the same arguments (their hash, as the audit keeps it),
before ``expires_at``; it is consumed with one conditional UPDATE, so two racing calls run it once.

A task-augmented call (MCP tasks) gets an approval of its own (``gate(..., for_task=True)``), closed
from the start so no other call can use it: its task waits ``input_required`` until the decision,
which ``register_decision_listener``'s listener (``mcp_tasks.approval_waits``) turns into the run or
the task's refusal.

Policy: a tool's ``approvers`` auth expression names who may decide besides the caller; tenant
admins (and superusers) always may. A role rule (``role:a,b``) is four-eyes: the caller may not
approve their own call (they may still deny it). Anyone else gets 404, as for an unknown id.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass

import mcp.types as types
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from ulid import ULID

from apps_runtime.auth_expr import parse_auth
from core.errors import DomainError
from mcp_gateway.audit_log import arguments_hash
from mcp_gateway.models import Approval
from mcp_gateway.tools.call.confirmation import confirmation_message
from mcp_gateway.tools.catalog.catalog import CatalogEntry, catalog_for
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result
from mcp_gateway.tools.pipeline.url_asks import asked_at_url
from tenants.callers import Caller, caller_for
from tenants.models import Tenant

Status = Approval.Status
ID_PREFIX = "apr_"


class ApprovalNotFound(DomainError):
    status = 404
    code = "not_found"

    def __init__(self) -> None:
        super().__init__("No such approval.")


class ApprovalRefused(DomainError):
    """A decision this person may not make (their own call under four-eyes), or one made already."""

    def __init__(self, message: str, status: int = 403, code: str = "forbidden") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Gate:
    """What ``gate`` found: the call may run (``runs``), or the result to answer with instead."""

    runs: bool
    result: types.CallToolResult | None = None
    outcome: str = ""  # the audit outcome of a call that does not run
    waiting: Approval | None = None  # the approval the call waits for, undecided


def four_eyes(approvers: str) -> bool:
    """Whether ``approvers`` names a role rule: then the caller may not approve their own call."""
    return bool(approvers) and parse_auth(approvers).kind == "role"


def approval_url(origin: str | None, tenant: Tenant, public_id: str) -> str:
    """Where a person decides: the console's page of the approval."""
    return f"{origin or settings.PUBLIC_BASE_URL or ''}/console/{tenant.slug}/approvals/{public_id}"


def gate(call: CallContext, entry: CatalogEntry, arguments: dict, *, for_task: bool = False) -> Gate:
    """The approval state of this call of a ``confirm`` tool by a caller that cannot be asked.

    Runs (consuming an approval) when the same credential's same call was approved and not yet run;
    otherwise the answer: an approval requested (a new one, or the one still waiting), or a refusal
    saying why (denied, expired, already ran once); a refusal closes its approval, so calling again
    asks anew. ``for_task``: the call creates an MCP task, which waits on a new approval of its own
    (``Gate.waiting``) rather than on one another call of the same caller is waiting for.
    """
    caller = call.caller
    if not caller.is_authenticated or caller.user_id is None:
        return Gate(False, error_result(_no_person(entry)), "declined")
    key = {
        "credential_key": caller.credential_key,
        "wire_name": entry.wire_name,
        "arguments_sha256": arguments_hash(arguments),
    }
    now = timezone.now()
    found = Approval.objects.for_tenant(call.tenant).filter(closed=False, **key).order_by("-created_at")
    found = found.first()
    if found is None:
        return _requested(call, entry, arguments, key, now, for_task)
    if found.status == Status.APPROVED and found.expires_at > now and consume(found, now):
        return Gate(True)
    found.refresh_from_db()
    if found.status == Status.PENDING and found.expires_at > now:
        if for_task:
            return _requested(call, entry, arguments, key, now, for_task)
        return Gate(False, approval_result(call, found, waiting=True), "approval_required", found)
    Approval.objects.for_tenant(found.tenant_id).filter(pk=found.pk).update(closed=True)
    return Gate(False, error_result(refusal_text(_title(entry), found, now)), "declined")


def approval_result(call: CallContext, approval: Approval, *, waiting: bool = False) -> types.CallToolResult:
    """The contract's answer: isError, ``{"approval": {"id", "url", "expiresAt"}}``, and where to go."""
    url = approval_url(call.link_origin, call.tenant, approval.public_id)
    expires = approval.expires_at.isoformat().replace("+00:00", "Z")
    state = "still waits for" if waiting else "needs"
    text = (
        f"This call {state} a person's approval before it runs, and this client cannot ask for it. "
        f"Approve or deny it at {url} (approval {approval.public_id}, open until {expires}); "
        "once approved, make the same call again with the same arguments and it runs once. Nothing ran."
    )
    result = error_result(text)
    result.structured_content = {"approval": {"id": approval.public_id, "url": url, "expiresAt": expires}}
    return result


def asked(call: CallContext, gated: Gate) -> types.CallToolResult | Asked | None:
    """The answer of a call ``gate`` did not let run: for an approval still to decide, a URL-mode
    question pointing at its console page where the client can be asked so (the call runs once
    when approved, ``protocol.asking`` waiting for the decision); else ``gated.result``."""
    approval = gated.waiting
    if approval is None or gated.result is None:
        return gated.result
    expires = approval.expires_at.isoformat().replace("+00:00", "Z")
    message = (
        f"This call needs a person's approval before it runs (approval {approval.public_id}, open "
        f"until {expires}). Approve or deny it on this page; once approved it runs once. Nothing ran yet."
    )
    return asked_at_url(
        call,
        message,
        approval_url(call.link_origin, call.tenant, approval.public_id),
        approval.public_id,
        done=functools.partial(decided, approval.tenant_id, approval.pk),
        unanswered=gated.result,
    )


def decided(tenant_id: int, pk: int) -> bool:
    """Whether the approval is decided or past its expiry: the call may be made again to find out."""
    undecided = Approval.objects.for_tenant(tenant_id).filter(
        pk=pk, status=Status.PENDING, expires_at__gt=timezone.now()
    )
    return not undecided.exists()


def waiting_message(call: CallContext, approval: Approval) -> str:
    """A task's status message while it waits on ``approval``: where a person decides it."""
    url = approval_url(call.link_origin, call.tenant, approval.public_id)
    expires = approval.expires_at.isoformat().replace("+00:00", "Z")
    return (
        f"Waiting for a person's approval: approve or deny it at {url} (approval {approval.public_id}, "
        f"open until {expires}). Nothing runs until then."
    )


def _requested(
    call: CallContext, entry: CatalogEntry, arguments: dict, key: dict, now: dt.datetime, for_task: bool
) -> Gate:
    caller = call.caller
    open_ones = Approval.objects.for_tenant(call.tenant).filter(
        requested_by_id=caller.user_id, status=Status.PENDING, expires_at__gt=now
    )
    if open_ones.count() >= settings.APPROVALS_MAX_PENDING_PER_MEMBER:
        text = (
            f"You have {settings.APPROVALS_MAX_PENDING_PER_MEMBER} approval requests waiting for a "
            "decision; decide or let some expire before asking for more. Nothing ran."
        )
        return Gate(False, error_result(text), "rate_limited")
    ttl = entry.approval_ttl or settings.APPROVAL_TTL_SECONDS
    approval = Approval.objects.create(
        tenant=call.tenant,
        public_id=ID_PREFIX + str(ULID()).lower(),
        requested_by_id=caller.user_id,
        app_name=entry.app_name or "",
        question=confirmation_message(entry, arguments),
        approvers=entry.approvers or "",
        expires_at=now + dt.timedelta(seconds=ttl),
        closed=for_task,  # a task's own: no other call may use it
        **key,
    )
    return Gate(False, approval_result(call, approval), "approval_required", approval)


def withdraw(approval: Approval) -> None:
    """Drop an approval nobody will wait on (its task could not be created)."""
    Approval.objects.for_tenant(approval.tenant_id).filter(pk=approval.pk, status=Status.PENDING).delete()


def consume(approval: Approval, now: dt.datetime) -> bool:
    """Mark ``approval`` used if it is still approved and open: one conditional UPDATE, so it runs once."""
    done = (
        Approval.objects.for_tenant(approval.tenant_id)
        .filter(pk=approval.pk, status=Status.APPROVED, expires_at__gt=now)
        .update(status=Status.USED, used_at=now)
    )
    return done == 1


def _title(entry: CatalogEntry) -> str:
    return entry.tool.title or entry.wire_name


def refusal_text(name: str, approval: Approval, now: dt.datetime) -> str:
    """Why the call ``approval`` was asked for did not run (denied, expired, ran once already)."""
    ref = f"approval {approval.public_id}"
    if approval.status == Status.DENIED:
        who = approval.decided_by.get_username() if approval.decided_by else "a person"
        reason = f"{who} denied it ({ref})"
    elif approval.status == Status.USED:
        reason = f"it already ran once under {ref}"
    else:
        reason = f"{ref} expired at {approval.expires_at.isoformat()} without a decision"
        if approval.status == Status.APPROVED:
            reason = f"{ref} was approved but expired at {approval.expires_at.isoformat()} unused"
    return f"{name} did not run: {reason}. Call it again to ask for a new approval."


def _no_person(entry: CatalogEntry) -> str:
    name = entry.tool.title or entry.wire_name
    return f"{name} needs a person's approval before it runs, and this caller is nobody to ask. Nothing ran."


# --- deciding -------------------------------------------------------------------------------------


def visible_to(approval: Approval, caller: Caller) -> bool:
    """Whether ``caller`` may see ``approval``: who asked, who may decide; for anyone else it is 404."""
    if approval.requested_by_id is not None and approval.requested_by_id == caller.user_id:
        return True
    return may_decide(approval, caller)


def may_decide(approval: Approval, caller: Caller) -> bool:
    """Whether ``caller`` may decide ``approval`` at all (approving one's own four-eyes call aside)."""
    if not caller.is_member and not caller.is_superuser:
        return False
    if approval.requested_by_id == caller.user_id:
        return True
    if caller.is_tenant_admin or caller.is_superuser:
        return True
    return bool(approval.approvers) and parse_auth(approval.approvers).allows(caller)


def pending_for(tenant: Tenant, user: AbstractBaseUser) -> list[Approval]:
    """The open approvals ``user`` asked for or may decide, newest first (at most 200)."""
    caller = caller_for(tenant, user)
    rows = (
        Approval.objects.for_tenant(tenant)
        .filter(status=Status.PENDING, expires_at__gt=timezone.now())
        .select_related("requested_by")
        .order_by("-created_at")[:200]
    )
    return [row for row in rows if visible_to(row, caller)]


def access_approval(tenant: Tenant, public_id: str, user: AbstractBaseUser) -> Approval:
    """The approval ``public_id`` if ``user`` may see it.

    Raises:
        ApprovalNotFound: no such approval in the tenant, or one this user may not see.
    """
    found = (
        Approval.objects.for_tenant(tenant)
        .select_related("requested_by", "decided_by")
        .filter(public_id=public_id)
        .first()
    )
    if found is None or not visible_to(found, caller_for(tenant, user)):
        raise ApprovalNotFound()
    return found


# --- tasks waiting on a decision ------------------------------------------------------------------

# ``mcp_tasks`` (above this package) registers what a decision does to a task waiting on it
# (``mcp_tasks.approval_waits.decided``, in ``McpGatewayConfig.ready``).
DecisionListener = Callable[[Approval], None]
_decision_listener: DecisionListener | None = None


def register_decision_listener(listener: DecisionListener) -> None:
    global _decision_listener
    _decision_listener = listener


# --- agents' held calls ----------------------------------------------------------------------------

# An agent run's held call is an approval too: the run (``agents``, above this package) decides it
# through its own step, and registers here how (``agents.runs.decide_held``, in ``AgentsConfig.ready``).
AgentDecider = Callable[[Approval, AbstractBaseUser, bool], None]
_agent_decider: AgentDecider | None = None
AGENT_HOLD_SECONDS = 7 * 86400  # a held call waits for its run's decision, at most a week in lists


def register_agent_decider(decider: AgentDecider) -> None:
    global _agent_decider
    _agent_decider = decider


def hold_for_agent(
    tenant: Tenant, caller: Caller, wire_name: str, arguments: dict, question: str, run_id: str, step: int
) -> Approval:
    """The approval of an agent run's held call (its ``step``), decided in the console, the
    approvals API or the run's own approvals endpoint, with the tool's ``approvers``."""
    entry = catalog_for(tenant).by_name.get(wire_name)
    return Approval.objects.create(
        tenant=tenant,
        public_id=ID_PREFIX + str(ULID()).lower(),
        requested_by_id=caller.user_id,
        credential_key=caller.credential_key,
        wire_name=wire_name,
        app_name=(entry.app_name if entry else None) or "",
        arguments_sha256=arguments_hash(arguments),
        question=question,
        approvers=(entry.approvers if entry else None) or "",
        agent_run_id=run_id,
        agent_step=step,
        closed=True,  # only its run goes ahead on it: no call of the caller's own may use it
        expires_at=timezone.now() + dt.timedelta(seconds=AGENT_HOLD_SECONDS),
    )


def record_agent_decision(
    run_id: str, tenant_id: int, step: int, user: AbstractBaseUser, approve: bool
) -> None:
    """Mark the held call's approval decided (its run decided the step), refusing the caller's own
    approval under a four-eyes rule: the one check both paths share.

    Raises:
        ApprovalRefused: 403, the caller approving their own call under a four-eyes rule.
    """
    rows = Approval.objects.for_tenant(tenant_id).filter(agent_run_id=run_id, agent_step=step)
    found = rows.filter(status=Status.PENDING).first()
    if found is None:
        return
    if approve and found.requested_by_id == user.pk and four_eyes(found.approvers):
        raise ApprovalRefused(_FOUR_EYES.format(found.approvers))
    rows.filter(pk=found.pk, status=Status.PENDING).update(
        status=Status.APPROVED if approve else Status.DENIED, decided_by=user, decided_at=timezone.now()
    )


_FOUR_EYES = "This tool needs another person's approval (approvers: {}); you may not approve your own call."


def decide(tenant: Tenant, public_id: str, user: AbstractBaseUser, approve: bool) -> Approval:
    """Approve or deny an open approval as ``user``; final once made.

    Raises:
        ApprovalNotFound: see ``access_approval``.
        ApprovalRefused: 403 for the caller approving their own call under a four-eyes rule; 409 for
            one decided already or expired.
    """
    approval = access_approval(tenant, public_id, user)
    caller = caller_for(tenant, user)
    if not may_decide(approval, caller):
        raise ApprovalRefused("Only a person the tool's approvers rule names may decide this call.")
    if approve and approval.requested_by_id == user.pk and four_eyes(approval.approvers):
        raise ApprovalRefused(_FOUR_EYES.format(approval.approvers))
    if approval.agent_run_id:
        return _decide_held(approval, user, approve)
    now = timezone.now()
    with transaction.atomic():
        done = (
            Approval.objects.for_tenant(approval.tenant_id)
            .filter(pk=approval.pk, status=Status.PENDING, expires_at__gt=now)
            .update(status=Status.APPROVED if approve else Status.DENIED, decided_by=user, decided_at=now)
        )
    approval.refresh_from_db()
    if not done:
        state = "expired" if approval.status == Status.PENDING else f"already {approval.status}"
        raise ApprovalRefused(f"This approval is {state}; a decision is final.", 409, "conflict")
    if _decision_listener is not None:
        _decision_listener(approval)  # a task waiting on it runs, or ends refused, now
    return approval


def _decide_held(approval: Approval, user: AbstractBaseUser, approve: bool) -> Approval:
    if approval.status != Status.PENDING or _agent_decider is None:
        raise ApprovalRefused(
            f"This approval is already {approval.status}; a decision is final.", 409, "conflict"
        )
    _agent_decider(approval, user, approve)  # the run's decision marks this row (record_agent_decision)
    approval.refresh_from_db()
    return approval


def approval_json(approval: Approval) -> dict:
    """An approval as the API shows it."""
    return {
        "id": approval.public_id,
        "tool": approval.wire_name,
        "app": approval.app_name,
        "question": approval.question,
        "status": approval.status,
        "requestedBy": approval.requested_by.get_username() if approval.requested_by else None,
        "approvers": approval.approvers or None,
        "fourEyes": four_eyes(approval.approvers),
        "decidedBy": approval.decided_by.get_username() if approval.decided_by else None,
        "decidedAt": approval.decided_at,
        "createdAt": approval.created_at,
        "expiresAt": approval.expires_at,
        "agentRunId": approval.agent_run_id or None,
        "agentStep": approval.agent_step,
    }
