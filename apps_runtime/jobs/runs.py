"""A run's state machine: queued -> running -> succeeded | failed | timed_out, or back to queued.

Every transition is a conditional update fenced by (status, attempts), so a duplicate task delivery
cannot run an attempt twice, and a worker that comes back after the reaper took its attempt away
cannot overwrite what happened since. Runs are at-least-once: an attempt lost with its worker runs
again, so job handlers should be idempotent.

A run that ends drops its body (up to a request's size): only a run that may still be attempted
needs it, and the body counts against the tenant's storage quota until then (``storage_quota``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps_runtime.jobs.queue import send_on_commit
from apps_runtime.models import JobRun
from apps_runtime.retention import record_handler_error
from core.error_ids import new_error_id
from core.storable import storable_text

logger = logging.getLogger("apps_runtime.jobs")

Status = JobRun.Status
TIMEOUT_CODE = "handler_timeout"
_EXCERPT = 2000
ATTEMPT_OUTPUT_CHARS = 4000  # the tail of a successful attempt's output kept in its log entry
# What an ended run keeps of its body: nothing (see the module's docstring).
ENDED_BODY = {"body": {}, "body_bytes": 0}


@dataclass(frozen=True)
class Outcome:
    """How one attempt ended, as the run records it."""

    result_status: int | None
    error_id: str = ""
    error_code: str = ""
    logs: str = ""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error_code) or self.result_status is None or self.result_status >= 400

    @property
    def retryable(self) -> bool:
        """The handler answered 503 (or could not be run) or timed out: worth another attempt."""
        return self.result_status == 503 or self.error_code == TIMEOUT_CODE


@dataclass
class Reaped:
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)


def backoff_seconds(attempt: int) -> float:
    """The wait after failed attempt number ``attempt`` (1-based): doubling, capped."""
    base = settings.JOBS_RETRY_BACKOFF_SECONDS
    return min(settings.JOBS_RETRY_BACKOFF_MAX_SECONDS, base * 2 ** (attempt - 1))


def _scoped(run: JobRun):
    return JobRun.objects.for_tenant(run.tenant_id).filter(pk=run.pk)


def _lock(rows) -> JobRun | None:
    """Inside a transaction: lock the one row of ``rows`` (filtered by its expected state) and read it.

    A no-op conditional UPDATE comes first: it takes the row lock on PostgreSQL (waiting for, then
    re-checking against, a concurrent change) and the write lock on SQLite before anything is read,
    because SQLite refuses to turn a read transaction into a write once another writer went first.
    None when the row is no longer in the expected state.
    """
    if not rows.update(status=F("status")):
        return None
    return rows.get()


def claim(run: JobRun, *, version_number: int, timeout_ms: int) -> bool:
    """Start the next attempt of a queued run; False when another delivery started it first.

    The attempt's deadline is the route's time limit plus ``JOBS_RUN_GRACE_SECONDS``: past it, the
    reaper treats the attempt as lost with its worker.
    """
    now = timezone.now()
    deadline = now + timedelta(milliseconds=timeout_ms, seconds=settings.JOBS_RUN_GRACE_SECONDS)
    attempt = run.attempts + 1
    claimed = (
        _scoped(run)
        .filter(status=Status.QUEUED, attempts=run.attempts)
        .update(
            status=Status.RUNNING,
            attempts=attempt,
            started_at=now,
            deadline=deadline,
            version_number=version_number,
        )
    )
    if claimed:
        run.status, run.attempts, run.started_at, run.deadline = Status.RUNNING, attempt, now, deadline
        run.version_number = version_number
    return bool(claimed)


def _record_error(run: JobRun, kind: str, detail: str, logs: str = "") -> str:
    """Keep a failure that has no error id yet under a new one, for the tenant's admins."""
    error_id = new_error_id()
    record_handler_error(
        tenant_id=run.tenant_id,
        app_id=run.app_id,
        version_number=run.version_number,
        error_id=error_id,
        kind=kind,
        route_key=run.route_key,
        caller=(run.caller or {}).get("username") or "",
        member=run.member,
        trace=detail[:_EXCERPT],
        logs=logs,
    )
    return error_id


def answered_detail(status: int, body: object) -> str:
    return f"The handler answered {status}: {json.dumps(body, default=str)[:_EXCERPT]}"


def finish(run: JobRun, attempt: int, outcome: Outcome) -> JobRun | None:
    """Record how ``attempt`` ended: retry it later, or end the run. None if the attempt lost its claim.

    One conditional UPDATE, fenced by the claim: while it holds, only this attempt writes the row,
    so the ``run`` read before the claim is the row's current state.
    """
    now = timezone.now()
    retry = outcome.retryable and attempt < settings.JOBS_MAX_ATTEMPTS
    delay = backoff_seconds(attempt) if retry else None
    with transaction.atomic():
        error_id = outcome.error_id
        if outcome.failed and not error_id:
            error_id = _record_error(run, outcome.error_code or "error_status", outcome.detail, outcome.logs)
        duration_ms = max(0, int((now - run.started_at).total_seconds() * 1000)) if run.started_at else None
        changes = {
            "duration_ms": duration_ms,
            "result_status": outcome.result_status,
            "error_id": error_id,
            "error_code": outcome.error_code,
            "deadline": None,
            "attempt_log": [
                *run.attempt_log,
                _attempt_entry(
                    run, attempt, now, outcome.result_status, error_id, outcome.error_code, duration_ms
                )
                | _attempt_output(outcome),
            ],
        }
        if retry:
            changes.update(status=Status.QUEUED, due_at=now + timedelta(seconds=delay))
        else:
            changes.update(status=_final_status(outcome), finished_at=now, **ENDED_BODY)
        if not _scoped(run).filter(status=Status.RUNNING, attempts=attempt).update(**changes):
            transaction.set_rollback(True)  # and with it the error record of a result nobody keeps
            logger.warning("Run %s: attempt %s finished after the reaper took it back", run.run_id, attempt)
            return None
        if retry:
            send_on_commit([run.run_id], countdown=delay)
    for name, value in changes.items():
        setattr(run, name, value)
    return run


_OUTCOME_FIELDS = [
    "status",
    "due_at",
    "finished_at",
    "deadline",
    "duration_ms",
    "result_status",
    "error_id",
    "error_code",
    "attempt_log",
]


def _final_status(outcome: Outcome) -> str:
    if not outcome.failed:
        return Status.SUCCEEDED
    return Status.TIMED_OUT if outcome.error_code == TIMEOUT_CODE else Status.FAILED


def _attempt_entry(
    row: JobRun,
    attempt: int,
    now: datetime,
    result_status: int | None,
    error_id: str,
    error_code: str,
    duration_ms: int | None,
) -> dict:
    return {
        "attempt": attempt,
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "finished_at": now.isoformat(),
        "duration_ms": duration_ms,
        "result_status": result_status,
        "error_id": error_id,
        "error_code": error_code,
    }


def _attempt_output(outcome: Outcome) -> dict:
    """A successful attempt's ``print`` and ``request.log`` output, its tail bounded (a failed one's is
    in its error record)."""
    if outcome.failed or not outcome.logs:
        return {}
    return {"output": storable_text(outcome.logs[-ATTEMPT_OUTPUT_CHARS:])}


def fail_unrunnable(run: JobRun, code: str, detail: str) -> JobRun | None:
    """End a queued run that cannot start (its app was undeployed, its route removed). No retry."""
    with transaction.atomic():
        row = _lock(_scoped(run).filter(status=Status.QUEUED, attempts=run.attempts))
        if row is None:
            return None
        row.error_id = _record_error(row, code, detail)
        row.error_code = code
        row.status = Status.FAILED
        row.finished_at = timezone.now()
        row.body, row.body_bytes = ENDED_BODY["body"], ENDED_BODY["body_bytes"]
        row.save(update_fields=["status", "finished_at", "error_id", "error_code", *ENDED_BODY])
    return row


def reap(now: datetime | None = None) -> Reaped:
    """Take back attempts whose worker died, and send again tasks of runs queued for too long.

    A running attempt past its deadline is lost (its worker was killed, or its machine died): the run
    is queued again while attempts remain, else it fails with ``worker_lost`` and an error id. Never
    left running. Platform-wide: one reaper serves every tenant.
    """
    now = now or timezone.now()
    reaped = Reaped()
    stale = JobRun.all_tenants.filter(status=Status.RUNNING, deadline__lt=now).values_list("pk", "attempts")
    for pk, attempts in list(stale):
        with transaction.atomic():
            row = _lock(JobRun.all_tenants.filter(pk=pk, status=Status.RUNNING, attempts=attempts))
            if row is None:
                continue  # it finished, or another reaper has it
            detail = f"The worker running attempt {attempts} was lost before it finished"
            error_id = _record_error(row, "worker_lost", detail)
            entry = _attempt_entry(row, attempts, now, None, error_id, "worker_lost", None)
            row.attempt_log = [*row.attempt_log, entry]
            row.error_id, row.error_code = error_id, "worker_lost"
            row.deadline, row.result_status = None, None
            if attempts < settings.JOBS_MAX_ATTEMPTS:
                row.status, row.due_at = Status.QUEUED, now
                send_on_commit([row.run_id])
                reaped.requeued.append(row.run_id)
            else:
                row.status, row.finished_at = Status.FAILED, now
                row.body, row.body_bytes = ENDED_BODY["body"], ENDED_BODY["body_bytes"]
                reaped.failed.append(row.run_id)
            logger.warning("Run %s: attempt %s lost with its worker (%s)", row.run_id, attempts, row.status)
            ended = list(ENDED_BODY) if row.status == Status.FAILED else []
            row.save(update_fields=[*_OUTCOME_FIELDS, *ended])
    overdue = now - timedelta(seconds=settings.JOBS_QUEUED_RESEND_SECONDS)
    forgotten = list(
        JobRun.all_tenants.filter(status=Status.QUEUED, due_at__lt=overdue).values_list("run_id", flat=True)
    )
    if forgotten:
        JobRun.all_tenants.filter(run_id__in=forgotten, status=Status.QUEUED).update(due_at=now)
        send_on_commit(forgotten)
        reaped.resent = forgotten
    return reaped
