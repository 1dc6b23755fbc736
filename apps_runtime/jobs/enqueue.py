"""``request.enqueue(route, body)``: a handler queues an internal route of its app to run soon.

A handler running inside a run can queue runs too, and a handler that queues its own route makes a
chain (or, queuing it twice, a tree that doubles at every level). Caps keep that finite: runs per
handler call, the depth of a chain, the runs of the whole tree one call started (its ``origin``),
the tenant's runs queued in the last minute, and the tenant's runs not yet finished; of the last two
each member (who the run acts as: ``Caller.person_key``) may take only their share
(``core.member_shares``). A run's body counts against the tenant's storage quota, and the member's
share of it, until the run ends (``apps_runtime.storage_quota``). Over any of them the handler's
``request.enqueue`` raises ``LimitExceeded`` and nothing is queued.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from ulid import ULID

from apps_runtime.jobs.exceptions import (
    JobBodyInvalid,
    JobEnqueueLimit,
    JobRouteNotFound,
    JobRouteNotInternal,
)
from apps_runtime.models import JobRun
from apps_runtime.records import RecordsScope
from apps_runtime.storage_quota import check_room
from core.member_shares import member_share

# The run whose handler is executing in this context (None: a request, or a scheduled tick). The
# sandbox serves a handler's data calls in the thread that runs it, so ``request.enqueue`` reaches
# ``enqueue_run`` with this still set, without the route runtime having to know about runs.
_executing: ContextVar[JobRun | None] = ContextVar("executing_run", default=None)

UNFINISHED = (JobRun.Status.QUEUED, JobRun.Status.RUNNING)


def new_run_id() -> str:
    """``run_`` and a ULID: time-sortable and unguessable."""
    return f"run_{ULID()}"


@contextlib.contextmanager
def executing(run: JobRun) -> Iterator[None]:
    """Mark ``run`` as the one whose handler runs now: the runs it queues are one level deeper."""
    token = _executing.set(run)
    try:
        yield
    finally:
        _executing.reset(token)


def next_depth() -> int:
    """The depth of a run queued now: 1 from a request, the executing run's depth + 1 from a run."""
    parent = _executing.get()
    return 1 if parent is None else parent.depth + 1


def next_origin() -> str | None:
    """The origin of a run queued now by a run (its parent's); None from a request or a tick."""
    parent = _executing.get()
    return None if parent is None else parent.origin or parent.run_id


def _at_least(rows: QuerySet[JobRun], cap: int) -> bool:
    # Whether a ``cap``-th row exists: ``SELECT 1 ... LIMIT 1 OFFSET cap-1`` walks at most ``cap``
    # index entries, however many runs a tenant piled up, and sorts nothing (``exists`` drops the
    # model's ordering, which a sliced ``count`` kept: it sorted every matching row first).
    return cap <= 0 or rows[cap - 1 : cap].exists()


def check_caps(tenant_id: int, depth: int, origin: str | None = None, member: str | None = None) -> None:
    """Refuse a run that would make its chain too deep, its call's tree too big, or the tenant's runs
    of the last minute or its unfinished runs too many, or the member's (``member``) more than their
    share of either.

    Counted, not locked: calls racing at a cap may each add their runs, so it can be passed by at
    most the runs those concurrent calls queue (each capped per call).

    Raises:
        JobEnqueueLimit: over ``JOBS_MAX_CHAIN_DEPTH``, ``JOBS_MAX_RUNS_PER_CALL``,
            ``JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE`` or ``JOBS_MAX_QUEUED_RUNS_PER_TENANT``, or the
            member's share of the last two.
    """
    if depth > settings.JOBS_MAX_CHAIN_DEPTH:
        raise JobEnqueueLimit("chain_depth", settings.JOBS_MAX_CHAIN_DEPTH)
    runs = JobRun.objects.for_tenant(tenant_id)
    if origin is not None and _at_least(runs.filter(origin=origin), settings.JOBS_MAX_RUNS_PER_CALL):
        raise JobEnqueueLimit("per_origin", settings.JOBS_MAX_RUNS_PER_CALL)
    per_minute = settings.JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE
    recent = runs.filter(enqueued_at__gt=timezone.now() - timedelta(minutes=1))
    unfinished = runs.filter(status__in=UNFINISHED)
    per_tenant = settings.JOBS_MAX_QUEUED_RUNS_PER_TENANT
    if member is not None:
        # The member's share first: a member at their share hears about their own limit, and the
        # tenant's caps are then reached only by several members together.
        if _at_least(recent.filter(member=member), member_share(per_minute)):
            raise JobEnqueueLimit("member_rate", member_share(per_minute))
        if _at_least(unfinished.filter(member=member), member_share(per_tenant)):
            raise JobEnqueueLimit("member_queue", member_share(per_tenant))
    if _at_least(recent, per_minute):
        raise JobEnqueueLimit("tenant_rate", per_minute)
    if _at_least(unfinished, per_tenant):
        raise JobEnqueueLimit("tenant_queue", per_tenant)


def enqueue_run(scope: RecordsScope, route_key: Any, body: Any, origin: str | None = None) -> JobRun:
    """Queue a run of an internal route of the scope's app, as the scope's caller.

    ``origin`` names the tree of runs the handler call queuing this one belongs to: inside a run,
    its parent's; from a request, the first run that request's handler queued (None: this one).

    The caller is snapshotted on the run; each attempt acts as that caller with their rights at
    that moment (``tenants.callers.caller_now``): a member who left, or a revoked token, runs
    nothing. The caller sends the task once the row is committed.

    Raises:
        JobRouteNotFound: the app has no such route.
        JobRouteNotInternal: the route is reachable from outside.
        JobBodyInvalid: the body is not a JSON object, or is over the request size limit.
        JobEnqueueLimit: see ``check_caps``.
        StorageQuotaExceeded: the body would pass the tenant's storage quota or the member's share.
    """
    route = scope.compiled.routes.by_key.get(route_key) if isinstance(route_key, str) else None
    if route is None:
        raise JobRouteNotFound(route_key)
    if not route.auth.is_internal:
        raise JobRouteNotInternal(route.key, str(route.auth))
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise JobBodyInvalid("the body of a background run must be a JSON object")
    size = len(json.dumps(body))
    if size > settings.SANDBOX_MAX_REQUEST_BYTES:
        raise JobBodyInvalid(f"the body is over {settings.SANDBOX_MAX_REQUEST_BYTES} bytes")
    depth = next_depth()
    origin = next_origin() or origin
    member = scope.caller.person_key
    check_caps(scope.tenant_id, depth, origin, member)
    check_room(scope.tenant_id, member, size, what="a background run's body")
    run_id = new_run_id()
    return JobRun.objects.create(
        run_id=run_id,
        origin=origin or run_id,
        tenant_id=scope.tenant_id,
        app_id=scope.app_id,
        version_number=scope.compiled.number,
        job="",
        route_key=route.key,
        caller=scope.caller.to_snapshot(),
        member=member,
        body=body,
        body_bytes=size,
        depth=depth,
    )
