"""Errors of app jobs; the handler broker turns them into the SDK's errors."""

from __future__ import annotations

from apps_runtime.exceptions import RuntimeDomainError


class JobRouteNotFound(RuntimeDomainError):
    """``request.enqueue`` named a route the app does not have."""

    status, code = 404, "not_found"

    def __init__(self, route_key: object):
        super().__init__(f"no route {route_key!r} in this app: enqueue one of its internal routes")


class JobRouteNotInternal(RuntimeDomainError):
    """``request.enqueue`` named a route that callers can reach from outside."""

    def __init__(self, route_key: str, auth: str):
        super().__init__(
            f"route {route_key!r} has auth {auth!r}; only internal routes run in the background: "
            "set its auth to internal"
        )


class JobBodyInvalid(RuntimeDomainError):
    """The body of an enqueued run is not a JSON object, or is too large."""


class JobEnqueueLimit(RuntimeDomainError):
    """One handler call queued more runs than ``JOBS_MAX_ENQUEUES_PER_CALL``."""

    status, code = 429, "limit"

    def __init__(self, limit: int):
        super().__init__(f"a handler call may queue at most {limit} background runs")
