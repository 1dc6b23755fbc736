"""Tool rate limits: the tool's ``rateLimit``, else the tenant's ``toolRateLimit``, counted in fixed windows.

The windows are the platform's fixed-window limiter's (``core.rate_limits``: a period of 1 s, 60 s
or 3600 s aligned on the Unix epoch, one atomic round trip per call), its counts in Redis or the
database (``rate_counters``); a call that makes the count pass ``calls`` is refused with the seconds
left in the window.

A tool with no limit costs nothing here: no query and no Redis round trip.
"""

from __future__ import annotations

import time
from typing import Protocol

import mcp.types as types

from core.rate_limits import FixedWindowLimiter
from mcp_gateway.limits import rate_counters
from tenants.callers import Caller
from tenants.models import Tenant
from tenants.rate_limit_rule import RateLimit


class CatalogEntry(Protocol):
    """What the limits read of a tool (``tools.catalog.CatalogEntry`` is one; limits import nothing above)."""

    @property
    def wire_name(self) -> str: ...

    @property
    def rate_limit(self) -> RateLimit | None: ...


# The clock the windows are cut from; a seam for tests, which move it instead of waiting.
clock = time.time
# The start of every counter key; test runs sharing one Redis each take a prefix of their own.
KEY_PREFIX = "rl"

_limiter = FixedWindowLimiter(rate_counters.SharedCounters())


def applicable_limit(tenant: Tenant, entry: CatalogEntry) -> RateLimit | None:
    """The tool's own limit, else the tenant's default (which covers built-in tools too)."""
    if entry.rate_limit is not None:
        return entry.rate_limit
    default = tenant.rule_object("toolRateLimit")
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


def _key(tenant: Tenant, caller: Caller, entry: CatalogEntry, limit: RateLimit) -> str:
    return f"{KEY_PREFIX}:{tenant.pk}:{entry.wire_name}:{_who(limit, caller)}"


def at_rate_limit(tenant: Tenant, caller: Caller, entry: CatalogEntry) -> bool:
    """Whether the next call would be refused, without counting it: nobody is asked to confirm a
    call that cannot run."""
    limit = applicable_limit(tenant, entry)
    if limit is None:
        return False
    key = _key(tenant, caller, entry, limit)
    return _limiter.check(key, limit.calls, limit.window_seconds, now=clock()) is not None


def enforce_rate_limit(tenant: Tenant, caller: Caller, entry: CatalogEntry) -> types.CallToolResult | None:
    """Count this call against the limit that applies; the refusal to answer with when over it, else None."""
    limit = applicable_limit(tenant, entry)
    if limit is None:
        return None
    key = _key(tenant, caller, entry, limit)
    over = _limiter.hit(key, limit.calls, limit.window_seconds, now=clock())
    return None if over is None else _refusal(entry, limit, retry_after=over.retry_after)
