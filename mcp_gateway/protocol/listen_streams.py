"""Open ``subscriptions/listen`` streams, capped per credential, member and tenant, each with a lifetime.

A 2026-07-28 client hears of changes through a listen request whose response is the stream: an
HTTP response held open, so each stream holds a connection, a task and its buffers for as long as
the client likes. Uncapped, one member's token held 19,000 of them (12,586 file descriptors, 962
MB) and slowed every other tenant. So streams are counted like sessions (``transport.sessions``):
per credential (``Caller.credential_key``), per member (``Caller.person_key``) and per tenant.

A stream is never idle (waiting is what it is for), so unlike a session none is ended to make
room: one more is refused with JSON-RPC -32029, ``data.limit`` (``token``, ``member`` or
``tenant``) and ``data.retryAfter``, the seconds until the first stream that counts there reaches
the end of its life. Every stream ends after ``MCP_LISTEN_STREAM_SECONDS``, and as soon as the
credential that opened it is revoked or expires, with the spec's graceful close (the listen result
as the last frame), so a client re-listens, presenting its credential again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass

import anyio
from django.db.models import Q
from django.utils import timezone
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError

from core.error_ids import error_id_note, new_error_id
from mcp_gateway.limits.owner_caps import WHO, Owner, OwnerCaps, caps_setting, counts_against, seconds_setting
from mcp_gateway.protocol.concurrency import SERVER_BUSY
from oauth.models import Connection
from tenants.callers import Caller
from tenants.models import ApiToken

# How long a stream that was told to end may take to flush before it is cut: a client that stopped
# reading cannot hold its stream past its life by never taking the last frame.
CLOSE_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class StreamLimits(OwnerCaps):
    lifetime_s: float


def stream_limits() -> StreamLimits:
    """The listen-stream caps and lifetime from settings.

    Raises:
        ImproperlyConfigured: a cap below 1, or a lifetime that is not a positive number.
    """
    return StreamLimits(
        **caps_setting("MCP_LISTEN_STREAMS"), lifetime_s=seconds_setting("MCP_LISTEN_STREAM_SECONDS")
    )


class TooManyStreams(MCPError):
    """One more listen stream would break a cap; the answer says which and how long to wait."""

    def __init__(self, scope: str, limit: int, retry_after: int):
        self.scope = scope  # "token", "member" or "tenant"
        self.limit = limit
        self.retry_after = retry_after
        self.error_id = new_error_id()
        super().__init__(
            SERVER_BUSY,
            f"Too many open subscriptions/listen streams for {WHO[scope]} (at most {limit}). "
            f"Close one, or retry in {retry_after} s {error_id_note(self.error_id)}.",
            {"errorId": self.error_id, "limit": scope, "retryAfter": retry_after},
        )


@dataclass(eq=False)
class ListenStream:
    """One open stream: whom it counts against, when its life ends, and the handler serving it."""

    tenant_id: int
    principal: str  # Caller.credential_key
    member: str  # Caller.person_key
    token_id: int | None
    grant_id: int | None
    ends_at: float  # time.monotonic()
    handler: ListenHandler | None = None
    scope: anyio.CancelScope | None = None  # around the handler: cut at its deadline
    ending: str | None = None  # why it was told to end: "expired" or "revoked"

    def end(self, reason: str) -> None:
        """End the stream gracefully: its handler drains and sends the listen result; one that has not
        within ``CLOSE_GRACE_SECONDS`` is cut (idempotent)."""
        if self.ending is None:
            self.ending = reason
        # Told to end before its handler started (the poll runs while a listen request is being
        # prepared): the next poll's call finds the handler and its scope, and ends it then.
        if self.scope is not None and not math.isfinite(self.scope.deadline):
            self.scope.deadline = anyio.current_time() + CLOSE_GRACE_SECONDS
        if self.handler is not None:
            self.handler.close()


class StreamLedger:
    """The open listen streams of this process, by tenant. Event-loop thread only."""

    def __init__(self) -> None:
        self._open: dict[int, set[ListenStream]] = {}

    def open(self, tenant_id: int, caller: Caller, limits: StreamLimits) -> ListenStream:
        """Count one more stream of ``caller`` in the tenant.

        Raises:
            TooManyStreams: the credential, the member or the tenant is at its cap.
        """
        streams, owner = self._open.get(tenant_id, set()), Owner.of(caller)
        for scope, limit in limits.scopes():
            counted = [s for s in streams if counts_against(scope, owner, s)]
            if len(counted) >= limit:
                raise TooManyStreams(scope, limit, _wait(counted))
        stream = ListenStream(
            tenant_id=tenant_id,
            principal=owner.principal,
            member=owner.member,
            token_id=caller.token_id,
            grant_id=caller.oauth_grant_id,
            ends_at=time.monotonic() + limits.lifetime_s,
        )
        self._open.setdefault(tenant_id, set()).add(stream)
        return stream

    def close(self, stream: ListenStream) -> None:
        """The stream is over: it no longer counts (idempotent)."""
        streams = self._open.get(stream.tenant_id)
        if streams is not None:
            streams.discard(stream)
            if not streams:
                del self._open[stream.tenant_id]

    def count(self, tenant_id: int | None = None) -> int:
        """Open streams of one tenant, or of the whole process."""
        if tenant_id is not None:
            return len(self._open.get(tenant_id, ()))
        return sum(len(streams) for streams in self._open.values())

    def streams(self) -> list[ListenStream]:
        return [stream for streams in self._open.values() for stream in streams]

    def end_expired(self) -> None:
        """Tell every stream past its life to end."""
        now = time.monotonic()
        for stream in self.streams():
            if stream.ends_at <= now:
                stream.end("expired")

    def end_revoked(self, checked: tuple[set[int], set[int]], live: tuple[set[int], set[int]]) -> None:
        """Tell every stream whose token or OAuth connection was ``checked`` and is not ``live`` to end.

        ``checked``: what ``credentials()`` gave; ``live``: what ``live_credentials`` found good of it.
        A stream opened while the check ran has a credential nobody checked: it is judged at the
        next poll, not ended as revoked.
        """
        (checked_tokens, checked_grants), (tokens, grants) = checked, live
        for stream in self.streams():
            if (stream.token_id in checked_tokens and stream.token_id not in tokens) or (
                stream.grant_id in checked_grants and stream.grant_id not in grants
            ):
                stream.end("revoked")

    def credentials(self) -> tuple[set[int], set[int]]:
        """The token ids and OAuth connection ids the open streams came with."""
        streams = self.streams()
        return (
            {s.token_id for s in streams if s.token_id is not None},
            {s.grant_id for s in streams if s.grant_id is not None},
        )


def live_credentials(token_ids: Iterable[int], grant_ids: Iterable[int]) -> tuple[set[int], set[int]]:
    """Of these tokens and OAuth connections, the ones still good: at most two queries, none for none.

    The rules of ``tenants.tokens.check_token_usable`` (not revoked, not expired, its user active)
    and of ``oauth.connections.live_grant`` (not revoked, its user active), asked of every open
    stream's credential at once on each poll rather than one query a stream.
    """
    token_ids, grant_ids = set(token_ids), set(grant_ids)
    tokens: set[int] = set()
    if token_ids:
        unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
        live_tokens = ApiToken.all_tenants.filter(
            unexpired, pk__in=token_ids, revoked_at__isnull=True, user__is_active=True
        )
        tokens = set(live_tokens.values_list("pk", flat=True))
    grants: set[int] = set()
    if grant_ids:
        live_grants = Connection.all_tenants.filter(
            pk__in=grant_ids, revoked_at__isnull=True, user__is_active=True
        )
        grants = set(live_grants.values_list("pk", flat=True))
    return tokens, grants


def _wait(streams: list[ListenStream]) -> int:
    """Whole seconds until the first of these streams reaches the end of its life."""
    return max(1, math.ceil(min(s.ends_at for s in streams) - time.monotonic()))
