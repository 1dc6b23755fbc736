"""One attempt of a run: rebuild who it acts as, run the internal route, record the outcome."""

from __future__ import annotations

import logging

from apps_runtime.dispatch import LoadedApp, RouteResult, effective_timeout_ms, load_app, run_route
from apps_runtime.exceptions import AppNotFound, RequestTooLarge
from apps_runtime.jobs import runs
from apps_runtime.jobs.principals import caller_from_snapshot
from apps_runtime.models import JobRun
from apps_runtime.routes import Route

logger = logging.getLogger("apps_runtime.jobs")


class RunTargetGone(Exception):
    """The run's app is undeployed, or its active version no longer has the route as internal."""


def outcome_of(result: RouteResult) -> runs.Outcome:
    """What a route result means for a run: a failure keeps the sandbox's error id and logs."""
    detail = "" if result.failed else runs.answered_detail(result.status, result.body)
    return runs.Outcome(
        result_status=result.status,
        error_id=result.error_id or "",
        error_code=result.error_code or "",
        logs=result.logs,
        detail=detail,
    )


def _target(run: JobRun) -> tuple[LoadedApp, Route]:
    """The app's active version and the run's route in it.

    Raises:
        RunTargetGone: the app is undeployed, or the route is gone or no longer internal.
    """
    try:
        loaded = load_app(run.tenant, run.app.name)
    except AppNotFound as err:
        raise RunTargetGone(f"app '{run.app.name}' is not deployed") from err
    route = loaded.compiled.routes.by_key.get(run.route_key)
    if route is None or not route.auth.is_internal:
        raise RunTargetGone(
            f"v{loaded.version.number} of app '{run.app.name}' has no internal route '{run.route_key}'"
        )
    return loaded, route


def execute_run(run_id: str) -> JobRun | None:
    """Run the next attempt of a queued run; a run in any other state is left alone (a duplicate task).

    Runs the app's active version, as the caller snapshotted on the run, with ``internal=True``.
    """
    # Tasks carry only the run id; the run's own tenant scopes everything after this lookup.
    run = JobRun.all_tenants.select_related("tenant", "app").filter(run_id=run_id).first()
    if run is None:
        logger.warning("Run %s does not exist", run_id)
        return None
    if run.status != JobRun.Status.QUEUED:
        logger.info("Run %s is %s: nothing to do", run_id, run.status)
        return run
    try:
        loaded, route = _target(run)
    except RunTargetGone as gone:
        return runs.fail_unrunnable(run, "route_unavailable", str(gone))
    if not runs.claim(run, version_number=loaded.version.number, timeout_ms=effective_timeout_ms(route)):
        logger.info("Run %s was started by another delivery", run_id)
        return run
    caller = caller_from_snapshot(run.tenant_id, run.caller)
    try:
        result = run_route(loaded, route, caller, body=run.body, internal=True)
        outcome = outcome_of(result)
    except RequestTooLarge as err:
        outcome = runs.Outcome(result_status=413, error_code="request_too_large", detail=err.message)
    return runs.finish(run, run.attempts, outcome)
