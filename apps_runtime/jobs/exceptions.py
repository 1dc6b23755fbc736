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
    """A background run was refused because a cap on runs was reached; nothing was queued.

    ``kind`` names the cap: ``per_call`` (``JOBS_MAX_ENQUEUES_PER_CALL``), ``chain_depth``
    (``JOBS_MAX_CHAIN_DEPTH``: runs queued by runs), ``per_origin`` (``JOBS_MAX_RUNS_PER_CALL``:
    every run of the tree one handler call started), ``tenant_rate``
    (``JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE``) or ``tenant_queue``
    (``JOBS_MAX_QUEUED_RUNS_PER_TENANT``: the tenant's runs not yet finished), or ``member_rate`` and
    ``member_queue``: one member's share of the last two (``core.member_shares``).
    """

    status, code = 429, "limit"

    _MESSAGES = {
        "per_call": "a handler call may queue at most {limit} background runs",
        "chain_depth": (
            "a chain of background runs may be at most {limit} deep: this run is at depth {limit} "
            "and may not queue another"
        ),
        "per_origin": (
            "the background runs started from one call, with every run they queued, may be at most "
            "{limit}: this chain has queued that many"
        ),
        "tenant_rate": "this tenant already queued {limit} background runs in the last minute",
        "tenant_queue": "this tenant already has {limit} background runs waiting or running",
        "member_rate": (
            "you already queued {limit} background runs in the last minute, your share of this "
            "tenant's runs a minute"
        ),
        "member_queue": (
            "you already have {limit} background runs waiting or running, your share of this tenant's "
            "unfinished runs"
        ),
    }

    def __init__(self, kind: str, limit: int):
        if kind not in self._MESSAGES:
            raise ValueError(f"unknown enqueue limit {kind!r}")
        self.kind = kind
        self.limit = limit
        super().__init__(self._MESSAGES[kind].format(limit=limit))
