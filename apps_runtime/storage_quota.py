"""One storage quota per tenant for what it keeps outside its records, with a share per member.

Three kinds of row hold bytes a caller can make the platform keep: the bodies of job runs not yet
finished (``JobRun.body_bytes``; a run drops its body when it ends), the results MCP tasks keep
until they expire (``ToolTask.result_bytes``) and handler error records (``HandlerError.size_bytes``).
They count together against ``TENANT_STORAGE_QUOTA_BYTES``, and one member's against their share of
it (``core.member_shares.member_share``), so one member cannot fill what the others need.

A job body or a task result that would pass either is refused (``StorageQuotaExceeded``: the
handler's ``request.enqueue`` raises ``LimitExceeded``, the task ends failed saying so). An error
record is never refused (it is the record of a failure): its bytes count, and each member keeps
only their share of the tenant's error records (``apps_runtime.retention``).

Counted, not locked: writers racing at the quota may each pass it by one write (a job body and a
task result are each at most 1 MiB).

The MCP gateway's tasks live above this package, so it registers its own kind of stored bytes
(``count_stored``) when it starts; the runtime registers its two below.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db.models import Q, QuerySet, Sum

from apps_runtime.exceptions import RuntimeDomainError
from apps_runtime.models import HandlerError, JobRun
from core.member_shares import member_share

UNFINISHED = (JobRun.Status.QUEUED, JobRun.Status.RUNNING)

# Bytes of one kind of stored row: (of the whole tenant, of one member of it), in one query.
StoredBytes = Callable[[int, str], tuple[int, int]]
_KINDS: dict[str, StoredBytes] = {}


class StorageQuotaExceeded(RuntimeDomainError):
    """Keeping this would pass the tenant's storage quota, or the member's share of it: nothing kept."""

    status, code = 413, "limit"

    def __init__(self, what: str, size: int, used: int, limit: int, *, whose: str):
        self.what, self.size, self.used, self.limit, self.whose = what, size, used, limit, whose
        owner = "your share of this workspace's storage" if whose == "member" else "this workspace's storage"
        super().__init__(
            f"{what} of {size} bytes would pass {owner} ({used} of {limit} bytes used by job bodies, "
            "task results and error records): let queued runs finish or task results expire, and try again"
        )


def count_stored(kind: str, stored_bytes: StoredBytes) -> None:
    """Count one more kind of stored row against the quota (registering a kind twice replaces it)."""
    _KINDS[kind] = stored_bytes


def used_bytes(tenant_id: int, member: str) -> tuple[int, int]:
    """Bytes the tenant keeps, and of those the member's, every registered kind together."""
    counts = [stored(tenant_id, member) for stored in _KINDS.values()]
    return sum(everyone for everyone, _ in counts), sum(mine for _, mine in counts)


def member_share_bytes() -> int:
    return member_share(settings.TENANT_STORAGE_QUOTA_BYTES)


def check_room(tenant_id: int, member: str, size: int, *, what: str) -> None:
    """Refuse keeping ``size`` more bytes for ``member`` when that would pass their share or the quota.

    Raises:
        StorageQuotaExceeded: over the member's share (``whose="member"``) or the tenant's quota.
    """
    share = member_share_bytes()
    everyone, mine = used_bytes(tenant_id, member)
    if mine + size > share:
        raise StorageQuotaExceeded(what, size, mine, share, whose="member")
    quota = settings.TENANT_STORAGE_QUOTA_BYTES
    if everyone + size > quota:
        raise StorageQuotaExceeded(what, size, everyone, quota, whose="tenant")


def summed(rows: QuerySet, field: str, member: str) -> tuple[int, int]:
    """``field`` summed over ``rows``, and over those of ``member``: what a kind of row counts."""
    totals = rows.aggregate(everyone=Sum(field), mine=Sum(field, filter=Q(member=member)))
    return totals["everyone"] or 0, totals["mine"] or 0


def _job_bodies(tenant_id: int, member: str) -> tuple[int, int]:
    # Only unfinished runs keep a body (``jobs.runs`` drops it at the end).
    unfinished = JobRun.objects.for_tenant(tenant_id).filter(status__in=UNFINISHED)
    return summed(unfinished, "body_bytes", member)


def _error_records(tenant_id: int, member: str) -> tuple[int, int]:
    return summed(HandlerError.objects.for_tenant(tenant_id), "size_bytes", member)


count_stored("job bodies", _job_bodies)
count_stored("error records", _error_records)
