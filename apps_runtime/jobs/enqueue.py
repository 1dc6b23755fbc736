"""``request.enqueue(route, body)``: a handler queues an internal route of its app to run soon."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from ulid import ULID

from apps_runtime.jobs.exceptions import JobBodyInvalid, JobRouteNotFound, JobRouteNotInternal
from apps_runtime.jobs.principals import snapshot
from apps_runtime.models import JobRun
from apps_runtime.records import RecordsScope


def new_run_id() -> str:
    """``run_`` and a ULID: time-sortable and unguessable."""
    return f"run_{ULID()}"


def enqueue_run(scope: RecordsScope, route_key: Any, body: Any) -> JobRun:
    """Queue a run of an internal route of the scope's app, as the scope's caller.

    The caller is snapshotted on the run: the run acts with exactly the rights the handler had
    (roles, superuser flag, read-only token). The caller sends the task once the row is committed.

    Raises:
        JobRouteNotFound: the app has no such route.
        JobRouteNotInternal: the route is reachable from outside.
        JobBodyInvalid: the body is not a JSON object, or is over the request size limit.
    """
    route = scope.compiled.routes.by_key.get(route_key) if isinstance(route_key, str) else None
    if route is None:
        raise JobRouteNotFound(route_key)
    if not route.auth.is_internal:
        raise JobRouteNotInternal(route.key, str(route.auth))
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise JobBodyInvalid("the body of a background run must be a JSON object")
    if len(json.dumps(body)) > settings.SANDBOX_MAX_REQUEST_BYTES:
        raise JobBodyInvalid(f"the body is over {settings.SANDBOX_MAX_REQUEST_BYTES} bytes")
    return JobRun.objects.create(
        run_id=new_run_id(),
        tenant_id=scope.tenant_id,
        app_id=scope.app_id,
        version_number=scope.compiled.number,
        job="",
        route_key=route.key,
        caller=snapshot(scope.caller),
        body=body,
    )
