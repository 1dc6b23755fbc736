"""A separate server process's share of a counter race (spawned: it sets Django up itself)."""

from __future__ import annotations

import os
import time


def hit_in_process(env: dict, key: str, hits: int, barrier, results) -> None:
    """Set Django up against ``env``, wait for the other processes, then count ``hits`` calls in ``key``."""
    os.environ.update(env)
    import django

    django.setup()
    from mcp_gateway.limits import rate_counters

    barrier.wait()
    results.put([rate_counters.hit(key, ttl=60, now=time.time()) for _ in range(hits)])
