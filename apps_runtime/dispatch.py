"""The one entry point that runs an app route as a caller.

The front-end view and the MCP gateway both call ``run_route``, so the checks and the behaviour of
a route cannot drift between the two paths.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.urls import reverse

from apps_runtime.auth_expr import AuthExpr
from apps_runtime.bundles import bundle_dir
from apps_runtime.call_events import CallEvents
from apps_runtime.compiled import CompiledVersion, compiled_version
from apps_runtime.egress.client import EgressCall
from apps_runtime.exceptions import (
    AppNotFound,
    AuthenticationRequired,
    PermissionDenied,
    RequestTooLarge,
    RouteNotFound,
)
from apps_runtime.jobs.queue import send_on_commit
from apps_runtime.models import App, AppVersion
from apps_runtime.records import RecordsScope
from apps_runtime.retention import record_call_log, record_handler_error
from apps_runtime.routes import Route
from apps_runtime.sandbox import HandlerFailed, Invocation, SandboxLimits, get_sandbox
from apps_runtime.sandbox import RequestTooLarge as SandboxRequestTooLarge
from apps_runtime.sandbox_broker import make_broker
from core import tracing
from core.caches import BoundedCache
from tenants.callers import Caller
from tenants.models import Tenant

logger = logging.getLogger("apps_runtime.dispatch")


ASKS_OUTSIDE_MCP = "This route asks its caller for input (request.ask), which only an MCP client can give."


@dataclass(frozen=True)
class LoadedApp:
    """An app with its active version, compiled."""

    app: App
    version: AppVersion
    compiled: CompiledVersion


@dataclass
class RouteResult:
    status: int
    body: Any
    error_id: str | None = None
    error_code: str | None = None
    error_url: str | None = None  # where a tenant admin reads a failed run (the handler-error API)
    timeout_ms: int | None = None  # the route's time limit, when that is what stopped the handler
    logs: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    asks: Any = None  # the handler asked its caller (``request.ask``): unchecked, from the sandbox
    # The provider of a connection the caller has not connected, when an outbound request needed it
    # (the host side knows it, not the sandbox): the MCP gateway may ask them to connect.
    missing_connection: str = ""

    @property
    def failed(self) -> bool:
        return self.error_id is not None


_loaded: BoundedCache[tuple, LoadedApp] = BoundedCache(4096)


def load_app(tenant: Tenant, name: str) -> LoadedApp:
    """The tenant's app ``name`` with its active version.

    Cached per process under the tenant's ``state_version``, which every deploy, rollback and
    undeploy bumps: a freshly loaded tenant never sees a stale version.

    Raises:
        AppNotFound: no such app, or it is undeployed.
    """
    key = (*tenant.state_key, name)
    loaded = _loaded.get(key)
    if loaded is None:
        loaded = _loaded.put(key, _load_app(tenant, name))
        # Loaded anew: the tenant changed since, maybe by a deploy made in another process.
        retire_other_versions(loaded.app.tenant_id, loaded.app.pk, loaded.version.pk)
    return loaded


def retire_other_versions(tenant_id: int, app_id: int, version_id: int | None) -> int:
    """Retire this process's warm workers of the app's versions other than ``version_id`` (all of them when
    None: undeployed), which a deploy made elsewhere superseded; returns how many were idle.
    ``superseded.retire_superseded`` sweeps them for every app, periodically.
    """
    current = warm_key(tenant_id, app_id, version_id) if version_id is not None else ""
    return get_sandbox().supersede_workers(warm_key(tenant_id, app_id), current)


def _load_app(tenant: Tenant, name: str) -> LoadedApp:
    app = (
        App.objects.for_tenant(tenant)
        .select_related("active_version")
        .defer("active_version__bundle")
        .filter(name=name)
        .first()
    )
    if app is not None and app.active_version is None:
        retire_other_versions(app.tenant_id, app.pk, None)
    if app is None or app.active_version is None:
        raise AppNotFound(name)
    app.tenant = tenant  # so a failure names the tenant's error URL without a query
    return LoadedApp(app=app, version=app.active_version, compiled=compiled_version(app.active_version))


def check_route_access(loaded: LoadedApp, route: Route, caller: Caller, *, internal: bool = False) -> None:
    """Refuse a caller who may not run ``route``: the app's ``access``, then the route's ``auth``.

    Raises:
        RouteNotFound: the route is internal and this is not an internal call.
        AuthenticationRequired: an anonymous caller on a route that is not public.
        PermissionDenied: the caller lacks the roles.
    """
    if route.auth.kind == "internal":
        if not internal:
            raise RouteNotFound(route.path)
        return
    if may_use_route(loaded.compiled.access, route.auth, caller):
        return
    if not caller.is_authenticated:
        raise AuthenticationRequired()
    raise PermissionDenied("you may not use this route")


def may_use_route(access: AuthExpr, route_auth: AuthExpr, caller: Caller) -> bool:
    """The rule for reaching a route from outside: public routes, else the app's access and the route's auth.

    The MCP catalog asks this same question to decide which tools a caller sees.
    """
    if route_auth.kind == "internal":
        return False
    if route_auth.kind == "public":
        return True
    return access.allows(caller) and route_auth.allows(caller)


def effective_timeout_ms(route: Route, cap_ms: int | None = None) -> int:
    """The route's time limit, capped by ``cap_ms`` (a task's run) or else SANDBOX_MAX_TIMEOUT_MS."""
    wanted = route.timeout_ms or settings.SANDBOX_DEFAULT_TIMEOUT_MS
    return max(settings.SANDBOX_MIN_TIMEOUT_MS, min(wanted, cap_ms or settings.SANDBOX_MAX_TIMEOUT_MS))


def sandbox_limits(route: Route, timeout_cap_ms: int | None = None) -> SandboxLimits:
    return SandboxLimits(
        timeout_ms=effective_timeout_ms(route, timeout_cap_ms),
        memory_mb=settings.SANDBOX_MEMORY_MB,
        max_request_bytes=settings.SANDBOX_MAX_REQUEST_BYTES,
        max_response_bytes=settings.SANDBOX_MAX_RESPONSE_BYTES,
        max_log_bytes=settings.SANDBOX_MAX_LOG_BYTES,
        max_data_calls=settings.SANDBOX_MAX_DATA_CALLS,
    )


def warm_key(tenant_id: int, app_id: int, version_id: int | None = None) -> str:
    """The sandbox's warm-worker key of one app version: its workers serve that version's calls only.
    Without ``version_id``, the prefix shared by every version of the app (to drain them all).
    """
    app_prefix = f"{tenant_id}:{app_id}:"
    return app_prefix if version_id is None else f"{app_prefix}{version_id}"


@dataclass(frozen=True)
class RouteCall:
    """One run of ``route`` of ``loaded`` as ``caller``: what the handler's request is made of.

    ``timeout_cap_ms`` lets a run that nobody waits on synchronously (an MCP task) have a longer
    time limit than SANDBOX_MAX_TIMEOUT_MS, up to the route's own ``timeoutMs``. ``events`` receives
    the handler's progress and log lines while it runs (``call_events``). ``answers`` are the caller's
    answers to the handler's questions so far and ``can_ask`` the kinds of question its client takes
    (``request.ask``); only an MCP request has them (None elsewhere: a handler that asks gets 400).
    ``traceparent``: the caller's W3C trace context, checked, for the handler to carry on.
    ``internal``: a run the platform makes itself (a job), past the route's ``internal`` guard.
    """

    loaded: LoadedApp
    route: Route
    caller: Caller
    body: dict | None = None
    query: dict | None = None
    params: dict | None = None
    tool: dict | None = None
    internal: bool = False
    timeout_cap_ms: int | None = None
    events: CallEvents | None = None
    answers: dict | None = None
    can_ask: tuple[str, ...] | None = None
    traceparent: str | None = None


def run_route(call: RouteCall) -> RouteResult:
    """Run the call's route as its caller in the sandbox.

    Raises:
        RouteNotFound, AuthenticationRequired, PermissionDenied: the caller may not run it.
        RequestTooLarge: the request is over the platform's limit.
    """
    loaded, route, caller = call.loaded, call.route, call.caller
    body, query, params, tool = call.body, call.query, call.params, call.tool
    internal, timeout_cap_ms, events = call.internal, call.timeout_cap_ms, call.events
    answers, can_ask, traceparent = call.answers, call.can_ask, call.traceparent
    check_route_access(loaded, route, caller, internal=internal)
    request = {
        "method": route.method,
        "path": route.path,
        "body": body or {},
        "query": query or {},
        "params": params or {},
        "tool": tool,
        "user": caller.as_handler_user(),
        "answers": answers or {},
        "can_ask": list(can_ask or ()),
        "traceparent": traceparent,
    }
    scope = RecordsScope(
        tenant_id=loaded.app.tenant_id, app_id=loaded.app.pk, compiled=loaded.compiled, caller=caller
    )
    invocation = Invocation(
        bundle_dir=str(bundle_dir(loaded.version)),
        handler=route.handler,
        request=request,
        limits=sandbox_limits(route, timeout_cap_ms),
        tenant_key=str(loaded.app.tenant_id),
        warm_key=None
        if route.isolated_calls
        else warm_key(loaded.app.tenant_id, loaded.app.pk, loaded.version.pk),
    )
    enqueued: list[str] = []
    try:
        with handler_span(loaded, route) as span:
            request["traceparent"] = tracing.current_traceparent() or traceparent  # the handler's span
            egress = _egress_call(loaded, route, caller, invocation, request["traceparent"])
            broker = make_broker(  # in the span: its records and outbound requests are children of it
                scope, enqueued=enqueued, events=events, egress=egress
            )
            try:
                outcome = get_sandbox().run(invocation, broker)
            except HandlerFailed as failure:
                tracing.failed(span, failure.kind)
                raise
    except SandboxRequestTooLarge as err:
        raise RequestTooLarge("the request is too large for a handler") from err
    except HandlerFailed as failure:
        return _failure_result(loaded, route, caller, failure, invocation.limits.timeout_ms)
    finally:
        # After the handler, not during it: without a broker (eager mode) a run executes in-process
        # when sent, and must not spend the time limit of the handler that queued it.
        send_on_commit(enqueued)
    if outcome.asks is not None and can_ask is None:
        result = RouteResult(status=400, body={"error": ASKS_OUTSIDE_MCP}, logs=outcome.logs)
    else:
        result = RouteResult(
            status=outcome.status,
            body=outcome.body,
            logs=outcome.logs,
            asks=outcome.asks,
            missing_connection=egress.missing_connection,
        )
    # What it printed, for its admins' `lcp dev` and `lcp logs` (a failure's logs are in its error record).
    record_call_log(
        app=loaded.app,
        version_number=loaded.version.number,
        route_key=route.key,
        caller=caller.username or "",
        status=result.status,
        logs=outcome.logs,
    )
    return result


def _egress_call(
    loaded: LoadedApp, route: Route, caller: Caller, invocation: Invocation, traceparent: str | None
) -> EgressCall:
    """The outbound state of this call: its app's egress, bounded by the route's time limit."""
    compiled = loaded.compiled
    parts = (traceparent or "").split("-")
    return EgressCall(
        tenant_id=loaded.app.tenant_id,
        tenant_slug=loaded.app.tenant.slug,
        app_id=loaded.app.pk,
        route_key=route.key,
        caller=caller,
        deadline=time.monotonic() + invocation.limits.timeout_ms / 1000,
        rules=compiled.egress,
        declared_secrets=compiled.secrets,
        connections=compiled.connections,
        trace_id=parts[1] if len(parts) == 4 and len(parts[1]) == 32 else "",
    )


def handler_span(loaded: LoadedApp, route: Route):
    """The span of one handler run in the sandbox, recorded on the host side (the sandbox has no SDK)."""
    if not tracing.enabled():
        return nullcontext()
    return tracing.span(
        f"handler {loaded.app.name}",
        {
            "lcp.tenant": loaded.app.tenant.slug,
            "lcp.app": loaded.app.name,
            "lcp.app.version": loaded.version.number,
            "lcp.handler": route.handler,
        },
    )


def _failure_result(
    loaded: LoadedApp, route: Route, caller: Caller, failure: HandlerFailed, timeout_ms: int
) -> RouteResult:
    # The trace and logs are the tenant's (kept in the row, for its admins); the operator's log gets the id.
    logger.warning(
        "Handler failed (%s): error_id=%s tenant=%s app=%s route=%s",
        failure.kind,
        failure.error_id,
        loaded.app.tenant.slug,
        loaded.app.name,
        route.key,
    )
    record_handler_error(
        tenant_id=loaded.app.tenant_id,
        app=loaded.app,
        version_number=loaded.version.number,
        error_id=failure.error_id,
        kind=failure.kind,
        route_key=route.key,
        caller=caller.username or "",
        member=caller.person_key,
        trace=failure.trace,
        logs=failure.logs,
    )
    # The status comes from the sandbox's HANDLER_FAILURES, the one table of failure kinds; the edges
    # render the failure (the front-end as a problem, the gateway as an error result), never its trace.
    return RouteResult(
        status=failure.http_status,
        body=None,
        error_id=failure.error_id,
        error_code=failure.kind,
        timeout_ms=timeout_ms if failure.kind == "handler_timeout" else None,
        error_url=reverse(
            "handler-error", kwargs={"slug": loaded.app.tenant.slug, "error_id": failure.error_id}
        ),
        logs=failure.logs,
        headers={"X-Error-Id": failure.error_id},
    )
