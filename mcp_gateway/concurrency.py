"""Crossing from the event loop into synchronous ORM and sandbox work, once, in one way."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections

T = TypeVar("T")

# Tool calls block on handler runs; a pool of their own keeps them off Django's thread-sensitive
# executor and lets calls run side by side.
_executor = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="mcp-gateway")


def _with_connection_hygiene(fn: Callable[..., T], *args: Any) -> T:
    # What Django does around each request: drop connections past CONN_MAX_AGE or broken ones.
    close_old_connections()
    try:
        return fn(*args)
    finally:
        close_old_connections()


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` in the gateway's thread pool, with Django's connection hygiene."""
    work = partial(_with_connection_hygiene, fn, *args)
    return await sync_to_async(work, thread_sensitive=False, executor=_executor)()
