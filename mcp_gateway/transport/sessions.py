"""Open MCP sessions counted per token and per tenant, so one caller cannot take every session.

The SDK's session manager caps sessions for the whole process only. The HTTP layer asks this
ledger before letting a request open a session, records the id the SDK assigns, and the ledger
forgets a session as soon as the SDK no longer holds it (closed by the client, reaped when idle,
crashed): it asks ``is_open`` rather than trusting its own bookkeeping.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class SessionLimits:
    per_token: int
    per_tenant: int
    idle_s: float


def session_limits() -> SessionLimits:
    """The session caps and idle timeout from settings.

    Raises:
        ImproperlyConfigured: a cap below 1, or an idle timeout that is not a positive number.
    """
    limits = SessionLimits(
        per_token=settings.MCP_SESSIONS_PER_TOKEN,
        per_tenant=settings.MCP_SESSIONS_PER_TENANT,
        idle_s=float(settings.MCP_SESSION_IDLE_SECONDS),
    )
    if limits.per_token < 1 or limits.per_tenant < 1:
        raise ImproperlyConfigured("MCP_SESSIONS_PER_TOKEN and MCP_SESSIONS_PER_TENANT must be >= 1")
    if not (math.isfinite(limits.idle_s) and limits.idle_s > 0):
        raise ImproperlyConfigured("MCP_SESSION_IDLE_SECONDS must be a positive number of seconds")
    return limits


class TooManySessions(Exception):
    """Opening one more session would break the caller's per-token or per-tenant cap."""

    def __init__(self, scope: str, limit: int):
        self.scope = scope  # "token" or "tenant"
        self.limit = limit
        who = "this token" if scope == "token" else "this workspace"
        super().__init__(f"Too many open MCP sessions for {who} (at most {limit}).")


@dataclass
class Reservation:
    """Room held for one session while the request that opens it is served."""

    tenant_id: int
    principal: str
    settled: bool = False


class SessionLedger:
    """Sessions per tenant and principal (the token that opened them). Event-loop thread only."""

    def __init__(self, is_open: Callable[[str], bool]):
        self._is_open = is_open
        self._open: dict[int, dict[str, str]] = {}  # tenant id -> {session id: principal}
        self._opening: Counter[tuple[int, str | None]] = Counter()  # (tenant, principal) and (tenant, None)

    def count(self, tenant_id: int, principal: str | None = None) -> int:
        """Open sessions of the tenant (or of one principal in it), not counting those being opened."""
        sessions = self._live(tenant_id)
        if principal is None:
            return len(sessions)
        return sum(1 for owner in sessions.values() if owner == principal)

    def reserve(self, tenant_id: int, principal: str, limits: SessionLimits) -> Reservation:
        """Hold room for one more session of ``principal``.

        Raises:
            TooManySessions: the principal or the tenant is at its cap.
        """
        if self.count(tenant_id, principal) + self._opening[(tenant_id, principal)] >= limits.per_token:
            raise TooManySessions("token", limits.per_token)
        if self.count(tenant_id) + self._opening[(tenant_id, None)] >= limits.per_tenant:
            raise TooManySessions("tenant", limits.per_tenant)
        self._opening[(tenant_id, principal)] += 1
        self._opening[(tenant_id, None)] += 1
        return Reservation(tenant_id, principal)

    def opened(self, reservation: Reservation, session_id: str) -> None:
        """The SDK assigned ``session_id``: it counts from now on, in place of the reservation."""
        self._open.setdefault(reservation.tenant_id, {})[session_id] = reservation.principal
        self.release(reservation)

    def release(self, reservation: Reservation) -> None:
        """Give the held room back (idempotent)."""
        if reservation.settled:
            return
        reservation.settled = True
        for key in ((reservation.tenant_id, reservation.principal), (reservation.tenant_id, None)):
            self._opening[key] -= 1
            if self._opening[key] <= 0:
                del self._opening[key]

    def _live(self, tenant_id: int) -> dict[str, str]:
        sessions = self._open.get(tenant_id)
        if sessions is None:
            return {}
        for session_id in [sid for sid in sessions if not self._is_open(sid)]:
            del sessions[session_id]
        if not sessions:
            del self._open[tenant_id]
        return sessions
