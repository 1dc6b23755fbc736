"""One attempt of a run: rebuild who it acts as, run the internal route, record the outcome."""

from __future__ import annotations

import logging

from apps_runtime.dispatch import LoadedApp, RouteCall, RouteResult, effective_timeout_ms, load_app, run_route
from apps_runtime.exceptions import AppNotFound, RequestTooLarge
from apps_runtime.jobs import runs
from apps_runtime.jobs.enqueue import executing
from apps_runtime.models import JobRun
from apps_runtime.routes import Route
from tenants.callers import caller_now

logger = logging.getLogger("apps_runtime.jobs")


# A failure of the platform while running an attempt. The detail stays generic: the exception's text
# can name hosts, paths or internals, and the error record is shown to the tenant's admins.
PLATFORM_ERROR = "platform_error"
PLATFORM_DETAIL = "The platform failed while running this attempt; its log has the details under the run id"
CALLER_GONE = "caller_gone"
CALLER_GONE_DETAIL = (
    "Nothing ran: the member who queued this run is no longer a member of the workspace, or the "
    "credential they queued it with was revoked or has expired"
)


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

    Runs the app's active version, as the caller snapshotted on the run with their rights now
    (``tenants.callers.caller_now``), with ``internal=True``. A
    failure of the platform itself (not of the handler) ends the run ``failed`` with an error id: a
    run is never left queued or running by an exception, where the reaper would run it again.
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
        timeout_ms = effective_timeout_ms(route)
        claimed = runs.claim(run, version_number=loaded.version.number, timeout_ms=timeout_ms)
    except RunTargetGone as gone:
        return runs.fail_unrunnable(run, "route_unavailable", str(gone))
    except Exception:  # the top of a task: whatever broke, the run must end, not wait to be re-run
        logger.exception("Run %s could not be started", run_id)
        return runs.fail_unrunnable(run, PLATFORM_ERROR, PLATFORM_DETAIL)
    if not claimed:
        logger.info("Run %s was started by another delivery", run_id)
        return run
    return runs.finish(run, run.attempts, _attempt(run, loaded, route))


def _attempt(run: JobRun, loaded: LoadedApp, route: Route) -> runs.Outcome:
    """Run the claimed attempt; what went wrong in the platform is logged and becomes the outcome."""
    try:
        caller = caller_now(run.tenant, run.caller)
        if caller is None:
            return runs.Outcome(result_status=None, error_code=CALLER_GONE, detail=CALLER_GONE_DETAIL)
        with executing(run):
            return outcome_of(run_route(RouteCall(loaded, route, caller, body=run.body, internal=True)))
    except RequestTooLarge as err:
        return runs.Outcome(result_status=413, error_code="request_too_large", detail=err.message)
    except Exception:  # the top of a task: the attempt ends failed, with an error id, never left running
        logger.exception("Run %s: attempt %s failed in the platform", run.run_id, run.attempts)
        return runs.Outcome(result_status=None, error_code=PLATFORM_ERROR, detail=PLATFORM_DETAIL)
