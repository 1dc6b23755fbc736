"""The builder's one way from async code to the ORM: a worker thread with Django's connection hygiene."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, its stale or broken database connections closed around it."""

    def run() -> T:
        close_old_connections()
        try:
            return fn(*args)
        finally:
            close_old_connections()

    return await sync_to_async(run, thread_sensitive=False)()
