"""Celery tasks of the platform as a whole: the purge of every app's expired rows."""

from __future__ import annotations

import logging
import time

from celery import shared_task

from core.retention import purge_all

logger = logging.getLogger("lowcode_platform.tasks")

PURGE_EVERY_S = 3600.0
_last_purge: float | None = None


@shared_task(name="lowcode_platform.purge_expired", ignore_result=True)
def purge_expired() -> dict:
    """Beat's entry, every hour: every purge the apps registered (``core.retention.purge_all``)."""
    purged = purge_all()
    logger.info("Purged expired rows: %s", purged)
    return purged


def purge_if_due() -> dict | None:
    """For the in-process clock (no broker, no beat), which ticks every minute: purge once an hour."""
    global _last_purge
    now = time.monotonic()
    if _last_purge is not None and now - _last_purge < PURGE_EVERY_S:
        return None
    _last_purge = now
    return purge_expired()
