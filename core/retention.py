"""The one rule for keeping tenant rows bounded: at most the newest N of a tenant, and none too old.

Error records, job runs and audit rows grow with every call. Each kind has a retention period and
a per-tenant cap (settings ``RETENTION_*``); ``keep_newest`` enforces a cap, in one range delete.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone


def keep_newest(rows: QuerySet, cap: int) -> int:
    """Delete every row of ``rows`` but the newest ``cap`` (by primary key); the number deleted."""
    boundary = rows.order_by("-pk").values_list("pk", flat=True)[cap : cap + 1]
    oldest_dropped = next(iter(boundary), None)
    if oldest_dropped is None:
        return 0
    deleted, _ = rows.filter(pk__lte=oldest_dropped).delete()
    return deleted


def cutoff(days: float, now: datetime | None = None) -> datetime:
    """The moment rows kept ``days`` days expire before."""
    return (now or timezone.now()) - timedelta(days=days)
