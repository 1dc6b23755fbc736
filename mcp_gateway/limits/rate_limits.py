"""Tool rate limits: the tool's ``rateLimit``, else the tenant's ``toolRateLimit``, counted in fixed windows.

A window is a period (1 s, 60 s, 3600 s) aligned on the Unix epoch; each call adds one to its
window's count (``rate_counters``), and a call that makes the count pass ``calls`` is refused with
the seconds left in the window. Fixed windows cost one atomic round trip per call; the price is
that a caller may fit up to twice ``calls`` across a window boundary.

A tool with no limit costs nothing here: no query and no Redis round trip.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import mcp.types as types

from mcp_gateway.limits import rate_counters
from tenants.callers import Caller
from tenants.models import Tenant
from tenants.rate_limit_rule import RateLimit

if TYPE_CHECKING:  # the limits layer reads a catalog entry's fields; it imports nothing above it
    from mcp_gateway.tools.catalog import CatalogEntry

# The clock the windows are cut from; a seam for tests, which move it instead of waiting.
clock = time.time
# The start of every counter key; test runs sharing one Redis each take a prefix of their own.
KEY_PREFIX = "rl"


def applicable_limit(tenant: Tenant, entry: CatalogEntry) -> RateLimit | None:
    """The tool's own limit, else the tenant's default (which covers built-in tools too)."""
    if entry.rate_limit is not None:
        return entry.rate_limit
    default = tenant.setting("toolRateLimit")
    return RateLimit.from_json(default) if default else None


def _who(limit: RateLimit, caller: Caller) -> str:
    # A per-user limit counts the person across their tokens and connections, not one credential.
    return "tenant" if limit.scope == "tenant" else caller.person_key


def _refusal(entry: CatalogEntry, limit: RateLimit, retry_after: int) -> types.CallToolResult:
    whose = "for each caller" if limit.scope == "user" else "for the whole workspace"
    text = (
        f"Rate limit reached: {entry.wire_name} allows {limit.calls} call{'s' if limit.calls != 1 else ''} "
        f"per {limit.per} {whose}. Nothing ran. Retry in {retry_after} s."
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True, _meta={"retryAfter": retry_after}
    )


def _window_key(tenant: Tenant, caller: Caller, entry: CatalogEntry, limit: RateLimit, start: int) -> str:
    return f"{KEY_PREFIX}:{tenant.pk}:{entry.wire_name}:{_who(limit, caller)}:{start}"


def at_rate_limit(tenant: Tenant, caller: Caller, entry: CatalogEntry) -> bool:
    """Whether the next call would be refused, without counting it: nobody is asked to confirm a
    call that cannot run."""
    limit = applicable_limit(tenant, entry)
    if limit is None:
        return False
    start = int(clock() // limit.window_seconds) * limit.window_seconds
    return rate_counters.current(_window_key(tenant, caller, entry, limit, start)) >= limit.calls


def enforce_rate_limit(tenant: Tenant, caller: Caller, entry: CatalogEntry) -> types.CallToolResult | None:
    """Count this call against the limit that applies; the refusal to answer with when over it, else None."""
    limit = applicable_limit(tenant, entry)
    if limit is None:
        return None
    now = clock()
    window = limit.window_seconds
    start = int(now // window) * window
    key = _window_key(tenant, caller, entry, limit, start)
    # A second past the window's end: servers' clocks differ a little.
    count = rate_counters.hit(key, ttl=start + window - int(now) + 1, now=now)
    if count is None or count <= limit.calls:
        return None
    return _refusal(entry, limit, retry_after=max(1, math.ceil(start + window - now)))
