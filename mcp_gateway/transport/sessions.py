"""Open MCP sessions counted per credential, per member and per tenant, so no caller takes them all.

The SDK's session manager caps sessions for the whole process only. The HTTP layer asks this
ledger before letting a request open a session, records the id the SDK assigns, and the ledger
forgets a session as soon as the SDK no longer holds it (closed by the client, reaped when idle,
crashed): it asks the ``SessionProbe`` rather than trusting its own bookkeeping.

Clients forget to close sessions. At the credential's (or the member's) cap the ledger ends that
caller's own least recently used idle session to make room, rather than refusing the new one; it
never ends another member's session, so at the tenant's cap a new session is refused, with the
real wait until the first idle session of the tenant would be reaped.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from mcp_gateway.limits.owner_caps import (
    SCOPES,
    WHO,
    Owner,
    OwnerCaps,
    caps_setting,
    counts_against,
    seconds_setting,
)


@dataclass(frozen=True)
class SessionLimits(OwnerCaps):
    idle_s: float


def session_limits() -> SessionLimits:
    """The session caps and idle timeout from settings.

    Raises:
        ImproperlyConfigured: a cap below 1, or an idle timeout that is not a positive number.
    """
    return SessionLimits(**caps_setting("MCP_SESSIONS"), idle_s=seconds_setting("MCP_SESSION_IDLE_SECONDS"))


class TooManySessions(Exception):
    """Opening one more session would break a session cap, and no idle session of the caller's could go."""

    def __init__(self, scope: str, limit: int, retry_after: int):
        self.scope = scope  # "token", "member" or "tenant"
        self.limit = limit
        self.retry_after = retry_after  # seconds until the first session that counts here is reaped
        super().__init__(f"Too many open MCP sessions for {WHO[scope]} (at most {limit}).")


class SessionProbe(Protocol):
    """What the ledger asks the transport about a session it recorded."""

    def is_open(self, session_id: str) -> bool: ...

    def idle_until(self, session_id: str) -> float | None:
        """When an idle session will be reaped (``time.monotonic`` clock); None while it is in use."""

    def end(self, session_id: str) -> None:
        """End an idle session now, as if its idle time had run out."""


@dataclass
class Reservation:
    """Room held for one session while the request that opens it is served."""

    tenant_id: int
    owner: Owner
    settled: bool = False


class SessionLedger:
    """Sessions per tenant, member and credential. Event-loop thread only."""

    def __init__(self, probe: SessionProbe):
        self._probe = probe
        self._open: dict[int, dict[str, Owner]] = {}  # tenant id -> {session id: owner}
        # (tenant, scope, Owner.key(scope)) -> sessions being opened
        self._opening: Counter[tuple[int, str, str]] = Counter()

    def reserve(self, tenant_id: int, owner: Owner, limits: SessionLimits) -> Reservation:
        """Hold room for one more session of ``owner``, ending the owner's least recently used idle
        session when the credential or the member is at its cap.

        Raises:
            TooManySessions: a cap is reached and none of the owner's sessions is idle (credential,
                member), or the tenant is at its cap.
        """
        for scope, limit in limits.scopes():
            sessions = self._sessions(tenant_id, scope, owner)
            if len(sessions) + self._opening[(tenant_id, scope, owner.key(scope))] < limit:
                continue
            # The credential's own idle sessions go first, then (at the member's cap) the member's
            # others; at the tenant's cap no one else's session is ended.
            victim = None
            if scope != "tenant":
                own = self._sessions(tenant_id, "token", owner)
                victim = self._least_recent_idle(own) or self._least_recent_idle(sessions)
            if victim is None:
                raise TooManySessions(scope, limit, self._wait(sessions, limits))
            self._end(tenant_id, victim)
        for scope in SCOPES:
            self._opening[(tenant_id, scope, owner.key(scope))] += 1
        return Reservation(tenant_id, owner)

    def opened(self, reservation: Reservation, session_id: str) -> None:
        """The SDK assigned ``session_id``: it counts from now on, in place of the reservation."""
        self._open.setdefault(reservation.tenant_id, {})[session_id] = reservation.owner
        self.release(reservation)

    def release(self, reservation: Reservation) -> None:
        """Give the held room back (idempotent)."""
        if reservation.settled:
            return
        reservation.settled = True
        tenant_id, owner = reservation.tenant_id, reservation.owner
        for key in ((tenant_id, scope, owner.key(scope)) for scope in SCOPES):
            self._opening[key] -= 1
            if self._opening[key] <= 0:
                del self._opening[key]

    def _sessions(self, tenant_id: int, scope: str, owner: Owner) -> list[str]:
        """The open sessions that count against ``owner`` at ``scope``."""
        return [sid for sid, held in self._live(tenant_id).items() if counts_against(scope, owner, held)]

    def _least_recent_idle(self, session_ids: list[str]) -> str | None:
        # An idle session's reaping time is its last request's end plus the idle timeout: the
        # earliest one is the least recently used.
        idle = [(until, sid) for sid in session_ids if (until := self._probe.idle_until(sid)) is not None]
        return min(idle)[1] if idle else None

    def _wait(self, session_ids: list[str], limits: SessionLimits) -> int:
        """Whole seconds until the first of these sessions is reaped; the idle timeout if all are busy."""
        idle = [until for sid in session_ids if (until := self._probe.idle_until(sid)) is not None]
        wait = min(idle) - time.monotonic() if idle else limits.idle_s
        return max(1, math.ceil(wait))

    def _end(self, tenant_id: int, session_id: str) -> None:
        self._probe.end(session_id)
        self._open[tenant_id].pop(session_id, None)

    def _live(self, tenant_id: int) -> dict[str, Owner]:
        sessions = self._open.get(tenant_id)
        if sessions is None:
            return {}
        for session_id in [sid for sid in sessions if not self._probe.is_open(sid)]:
            del sessions[session_id]
        if not sessions:
            del self._open[tenant_id]
        return sessions
