"""The one rule for keeping tenant rows bounded, and the registry of every app's purge.

Error records, job runs, audit rows and agent runs grow with every call. Each kind has a retention
period and often a per-tenant cap (settings ``RETENTION_*``); ``keep_newest`` enforces a cap, in one
range delete. Each Django app that keeps such rows registers one ``purge(now) -> {kind: deleted}``
in its ``AppConfig.ready`` (``register_purge``); the top layer (``lowcode_platform``: beat's hourly
task, the in-process clock, ``manage.py purge_expired``) runs them all with ``purge_all``, so an app
above the others (agents) plugs in as one below them does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

logger = logging.getLogger("core.retention")

Purge = Callable[[datetime], dict[str, int]]

_purges: dict[str, Purge] = {}


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


def register_purge(app: str, purge: Purge) -> None:
    """Run ``purge`` with every platform-wide purge (registered again under ``app``, it replaces)."""
    _purges[app] = purge


def registered_purges() -> dict[str, Purge]:
    """The purges by app, in the order they were registered."""
    return dict(_purges)


def purge_all(now: datetime | None = None) -> dict[str, int]:
    """Run every registered purge; the counts deleted, by kind (``{"job_runs": 3, ...}``)."""
    now = now or timezone.now()
    counts: dict[str, int] = {}
    for app, purge in _purges.items():
        found = purge(now)
        clash = counts.keys() & found.keys()
        if clash:
            raise ValueError(f"the purge of {app} counts kinds another purge counts: {sorted(clash)}")
        counts.update(found)
    return counts
