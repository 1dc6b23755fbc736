"""MCP tasks in the database: creation within the caps, each caller's own tasks, and the run's states.

A task is ``working`` from creation until its run ends ``completed`` or ``failed``, or a cancel ends
it ``cancelled``; one created waiting on a person's approval starts ``input_required`` (``resume``
makes it ``working``, ``refuse_waiting`` ends it). ``started_at`` tells a queued task (null) from a
running one. Every transition is a conditional UPDATE on the state it leaves, so a duplicate
delivery cannot run a task twice, and a run that ends after a cancel cannot overwrite it.

A task belongs to the credential that created it (an API token, an OAuth grant): any other caller,
even of the same tenant, gets "not found", as for an unknown or expired id.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps_runtime.storage_quota import summed
from core.member_shares import member_share
from mcp_gateway.exceptions import TaskFinished, TaskLimitReached, TaskNotFound
from mcp_gateway.models import LINK_ORIGIN_MAX_LENGTH, TERMINAL_STATUSES, Approval, ToolTask
from mcp_gateway.tools.catalog.cursors import decode_cursor, encode_cursor
from mcp_gateway.tools.pipeline.results import error_result
from tenants.callers import Caller
from tenants.models import Tenant

Status = ToolTask.Status
STATUS_MESSAGE_MAX = 500
WAITING_MESSAGE = "Waiting for the caller's answers (tasks/update)"
LOST_MESSAGE = "The run was lost with the process running it (a restart or a crash); it did not finish"


@dataclass
class Swept:
    resend: list[str] = field(default_factory=list)  # queued too long: send their runs again
    lost: list[ToolTask] = field(default_factory=list)  # running past their deadline: now failed
    purged: int = 0  # past their TTL: deleted


def _unfinished(tenant: Tenant) -> QuerySet[ToolTask]:
    return ToolTask.objects.for_tenant(tenant).filter(status__in=[Status.WORKING, Status.INPUT_REQUIRED])


def create(
    tenant: Tenant,
    caller: Caller,
    wire_name: str,
    arguments: dict,
    ttl_ms: int | None,
    can_ask: tuple[str, ...] = (),
    *,
    origin: str = "",
    approval: Approval | None = None,
    waiting_message: str = "",
) -> ToolTask:
    """A new working task, its TTL clamped to TASK_MAX_TTL_MS, keeping the origin of the call
    creating it for the links in its result (the run has no request to take one from), and the
    kinds of question its client answers (``can_ask``: none for a handshake-era task).
    ``approval``: the task waits ``input_required`` on it (saying so in ``waiting_message``), and
    its TTL counts from the approval's expiry, so a late decision still finds the task.

    The caps are counted, not locked: concurrent creations may pass them by a few, never by many.

    Raises:
        TaskLimitReached: the credential, the member or the tenant has too many unfinished tasks, or
            the member (their share) or the tenant too many that have not started yet.
    """
    owner = caller.credential_key
    unfinished = _unfinished(tenant)
    per_caller, per_tenant = settings.TASK_MAX_ACTIVE_PER_CALLER, settings.TASK_MAX_ACTIVE_PER_TENANT
    if unfinished.filter(owner=owner).count() >= per_caller:
        raise TaskLimitReached("caller", per_caller)
    # Every credential of one member (tokens, OAuth connections) counts together, so one member
    # cannot fill the tenant's cap by opening more connections.
    per_member = settings.TASK_MAX_ACTIVE_PER_MEMBER
    if caller.user_id is not None and unfinished.filter(caller__user_id=caller.user_id).count() >= per_member:
        raise TaskLimitReached("member", per_member)
    if unfinished.count() >= per_tenant:
        raise TaskLimitReached("tenant", per_tenant)
    # Waiting is bounded: past this many tasks not yet started, the tenant's share is taken; one
    # member may hold only their share of that queue, so the others can still queue theirs.
    per_queue = settings.TASK_MAX_QUEUED_PER_TENANT
    # Tasks waiting on their caller or on a person's approval hold no place in the workers' queue.
    waiting = unfinished.filter(started_at__isnull=True, status=Status.WORKING)
    if waiting.filter(member=caller.person_key).count() >= member_share(per_queue):
        raise TaskLimitReached("member_queue", member_share(per_queue))
    if waiting.count() >= per_queue:
        raise TaskLimitReached("queue", per_queue)
    now = timezone.now()
    ttl = ttl_ms if ttl_ms and ttl_ms > 0 else settings.TASK_DEFAULT_TTL_MS
    if approval is not None:
        ttl += max(0, int((approval.expires_at - now).total_seconds() * 1000))
    ttl = min(ttl, settings.TASK_MAX_TTL_MS)
    return ToolTask.objects.create(
        tenant=tenant,
        task_id=secrets.token_urlsafe(24),
        owner=owner,
        caller=caller.to_snapshot(),
        member=caller.person_key,
        wire_name=wire_name,
        arguments=arguments,
        created_at=now,
        updated_at=now,
        ttl_ms=ttl,
        expires_at=now + timedelta(milliseconds=ttl),
        poll_interval_ms=settings.TASK_POLL_INTERVAL_MS,
        link_origin=_link_origin(origin),
        can_ask=list(can_ask),
        approval=approval,
        status=Status.WORKING if approval is None else Status.INPUT_REQUIRED,
        status_message=waiting_message[:STATUS_MESSAGE_MAX],
    )


def _link_origin(origin: str) -> str:
    """The call's origin, or none when too long to keep (a Host that ALLOWED_HOSTS '*' let through)."""
    return origin if len(origin) <= LINK_ORIGIN_MAX_LENGTH else ""


def _owned(tenant: Tenant, caller: Caller) -> QuerySet[ToolTask]:
    return ToolTask.objects.for_tenant(tenant).filter(
        owner=caller.credential_key, expires_at__gt=timezone.now()
    )


def owned(tenant: Tenant, caller: Caller, task_id: str) -> ToolTask:
    """The caller's task ``task_id``.

    Raises:
        TaskNotFound: unknown, expired, or another caller's: the same answer for each.
    """
    task = _owned(tenant, caller).filter(task_id=task_id).first() if isinstance(task_id, str) else None
    if task is None:
        raise TaskNotFound(str(task_id))
    return task


def page(tenant: Tenant, caller: Caller, cursor: str | None, size: int) -> tuple[list[ToolTask], str | None]:
    """One page of the caller's tasks, newest first, and the cursor of the next page.

    Raises:
        InvalidCursor: a cursor this server did not issue.
    """
    rows = _owned(tenant, caller).order_by("-pk")
    if cursor:
        rows = rows.filter(pk__lt=decode_cursor("t", cursor))
    found = list(rows[: size + 1])
    more = len(found) > size
    found = found[:size]
    return found, encode_cursor("t", found[-1].pk) if more else None


def cancel(tenant: Tenant, caller: Caller, task_id: str) -> ToolTask:
    """End the caller's task ``cancelled``. A queued run never starts; a running one is not interrupted,
    but what it returns is discarded (its audit row still says how it ended).

    Raises:
        TaskNotFound: see ``owned``.
        TaskFinished: the task had already ended.
    """
    task = owned(tenant, caller, task_id)
    now = timezone.now()
    message = "Cancelled by the caller"
    live = ToolTask.objects.for_tenant(tenant).filter(pk=task.pk).exclude(status__in=TERMINAL_STATUSES)
    if not live.update(status=Status.CANCELLED, status_message=message, updated_at=now, deadline=None):
        task.refresh_from_db()
        raise TaskFinished(task.task_id, task.status)
    task.status, task.status_message, task.updated_at, task.deadline = Status.CANCELLED, message, now, None
    if task.approval_id is not None:  # nobody waits on it any more: off the lists, undecidable
        pending = Approval.objects.for_tenant(tenant).filter(status=Approval.Status.PENDING)
        pending.filter(pk=task.approval_id).update(expires_at=now)
    return task


def waited_too_long(task: ToolTask, now: datetime | None = None) -> bool:
    """A queued task that has waited TASK_QUEUE_SECONDS for its tenant's share of the task workers."""
    now = now or timezone.now()
    # A run sent again once its caller answered (the tasks extension), or once a person approved it,
    # waits from then, not from creation.
    since = task.updated_at if task.input_rounds or task.approval_id else task.created_at
    return task.started_at is None and since < now - timedelta(seconds=settings.TASK_QUEUE_SECONDS)


def fail_unstarted(task: ToolTask, message: str) -> bool:
    """End a queued task ``failed`` without running it; False when it started or ended meanwhile."""
    now = timezone.now()
    result = error_result(message).model_dump(by_alias=True, mode="json", exclude_none=True)
    done = ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING, started_at__isnull=True).update(
        status=Status.FAILED,
        status_message=message[:STATUS_MESSAGE_MAX],
        result=result,
        updated_at=now,
        platform_failure=True,
    )
    if done:
        task.status, task.result, task.updated_at = Status.FAILED, result, now
    return bool(done)


def claim(task: ToolTask, timeout_ms: int) -> bool:
    """Start the run of a queued task; False when it was started, cancelled or purged meanwhile."""
    now = timezone.now()
    deadline = now + timedelta(milliseconds=timeout_ms, seconds=settings.TASK_RUN_GRACE_SECONDS)
    claimed = ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING, started_at__isnull=True).update(
        started_at=now, deadline=deadline, updated_at=now
    )
    if claimed:
        task.started_at, task.deadline, task.updated_at = now, deadline, now
    return bool(claimed)


def kept_result_bytes(tenant_id: int, member: str) -> tuple[int, int]:
    """Bytes of the results the tenant's tasks still keep (until they expire), and of those the
    member's: what tasks count against the tenant's storage quota (``apps_runtime.storage_quota``)."""
    kept = ToolTask.objects.for_tenant(tenant_id).filter(expires_at__gt=timezone.now())
    return summed(kept, "result_bytes", member)


def finish(task: ToolTask, result: dict, size: int, *, failed: bool, by_platform: bool = False) -> bool:
    """Record the run's result (``size`` bytes); False when the task was cancelled (or declared lost)
    meanwhile. ``by_platform``: the platform failed the run (see ``ToolTask.platform_failure``)."""
    status = Status.FAILED if failed or by_platform else Status.COMPLETED
    now = timezone.now()
    done = ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING, started_at=task.started_at).update(
        status=status,
        result=result,
        result_bytes=size,
        status_message="",
        updated_at=now,
        deadline=None,
        input_requests=None,
        platform_failure=by_platform,
    )
    if done:
        task.status, task.result, task.updated_at, task.deadline = status, result, now, None
        task.platform_failure = by_platform
    return bool(done)


def park(task: ToolTask, requests: dict[str, dict]) -> bool:
    """The run asked its caller: the task waits ``input_required`` on ``requests`` (no run holds a
    worker meanwhile); False when it was cancelled or declared lost meanwhile."""
    now = timezone.now()
    done = ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING, started_at=task.started_at).update(
        status=Status.INPUT_REQUIRED,
        status_message=WAITING_MESSAGE,
        input_requests=requests,
        input_rounds=task.input_rounds + 1,
        started_at=None,
        updated_at=now,
        deadline=None,
    )
    return bool(done)


def resume(task: ToolTask) -> bool:
    """A task waiting on its approval, approved: ``working``, its run to be sent; False when it was
    cancelled or purged meanwhile."""
    now = timezone.now()
    done = ToolTask.all_tenants.filter(pk=task.pk, status=Status.INPUT_REQUIRED).update(
        status=Status.WORKING, status_message="", started_at=None, updated_at=now
    )
    if done:
        task.status, task.status_message, task.updated_at = Status.WORKING, "", now
    return bool(done)


def refuse_waiting(task: ToolTask, message: str) -> bool:
    """End a task waiting on its approval (denied, expired) with the error result ``message`` (the
    tool's kind of failure, not the platform's: nothing ran); False when it ended meanwhile."""
    now = timezone.now()
    result = error_result(message).model_dump(by_alias=True, mode="json", exclude_none=True)
    done = ToolTask.all_tenants.filter(pk=task.pk, status=Status.INPUT_REQUIRED).update(
        status=Status.FAILED,
        status_message=message[:STATUS_MESSAGE_MAX],
        result=result,
        result_bytes=len(json.dumps(result).encode()),
        updated_at=now,
    )
    if done:
        task.status, task.result, task.updated_at = Status.FAILED, result, now
    return bool(done)


def answer(tenant: Tenant, caller: Caller, task_id: str, responses: dict[str, dict]) -> bool:
    """Keep the caller's answers to the questions its task waits on (answers to anything else are
    ignored); True when none is left unanswered, so the run is to be sent again.

    Raises:
        TaskNotFound: see ``owned``.
    """
    with transaction.atomic():
        task = owned(tenant, caller, task_id)
        task = ToolTask.objects.for_tenant(tenant).select_for_update().get(pk=task.pk)
        pending = task.input_requests or {}
        given = {key: value for key, value in responses.items() if key in pending}
        if task.status != Status.INPUT_REQUIRED or not given:
            return False
        left = {key: request for key, request in pending.items() if key not in given}
        task.answers = {**task.answers, **given}
        task.input_requests = left or None
        task.updated_at = timezone.now()
        if not left:
            task.status, task.status_message = Status.WORKING, ""
        task.save(update_fields=["answers", "input_requests", "updated_at", "status", "status_message"])
        return not left


def note_progress(task: ToolTask, message: str) -> None:
    """Show the run's progress as the task's status message (while it is still working)."""
    ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING).update(
        status_message=message[:STATUS_MESSAGE_MAX], updated_at=timezone.now()
    )


def forgotten(task: ToolTask, now: datetime | None = None) -> bool:
    """A queued task whose run was sent long ago and never started (its sender died, or its message)."""
    now = now or timezone.now()
    return (
        task.status == Status.WORKING
        and task.started_at is None
        and task.updated_at < now - timedelta(seconds=settings.TASK_RESEND_SECONDS)
    )


def lost(task: ToolTask, now: datetime | None = None) -> bool:
    """A running task past its deadline: the process running it died (a restart, a crash)."""
    now = now or timezone.now()
    return task.status == Status.WORKING and task.deadline is not None and task.deadline < now


def mark_resent(task_ids: list[str], now: datetime) -> None:
    ToolTask.all_tenants.filter(task_id__in=task_ids, status=Status.WORKING, started_at__isnull=True).update(
        updated_at=now
    )


def sweep(now: datetime | None = None) -> Swept:
    """Platform-wide upkeep: queued tasks to send again, lost runs to fail, expired tasks to delete.

    A run still going past its deadline was lost with its process: it is failed, not run again,
    because it may have done part of its work (a task runs at most once).
    """
    now = now or timezone.now()
    swept = Swept()
    stale = now - timedelta(seconds=settings.TASK_RESEND_SECONDS)
    queued = ToolTask.all_tenants.filter(status=Status.WORKING, started_at__isnull=True, updated_at__lt=stale)
    swept.resend = list(queued.values_list("task_id", flat=True)[:1000])
    mark_resent(swept.resend, now)
    for task in ToolTask.all_tenants.filter(status=Status.WORKING, deadline__lt=now)[:1000]:
        if fail_lost(task, now):
            swept.lost.append(task)
    swept.purged, _ = ToolTask.all_tenants.filter(expires_at__lte=now).delete()
    return swept


def fail_lost(task: ToolTask, now: datetime) -> bool:
    result = error_result(LOST_MESSAGE).model_dump(by_alias=True, mode="json", exclude_none=True)
    lost = ToolTask.all_tenants.filter(pk=task.pk, status=Status.WORKING, started_at=task.started_at).update(
        status=Status.FAILED,
        status_message=LOST_MESSAGE,
        result=result,
        updated_at=now,
        deadline=None,
        platform_failure=True,
    )
    return bool(lost)
