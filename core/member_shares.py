"""The one rule for a member's share of a tenant-wide cap.

A cap counted per tenant (tasks waiting to start, runs queued a minute, stored bytes, error records
kept) can be filled by one member alone, and then every other member of the tenant is refused. So
each member may take only ``TENANT_MEMBER_SHARE_PERCENT`` of such a cap, rounded down, at least 1,
and always strictly below the cap itself (for a cap of 2 or more): one member can never exhaust it.

There is no exception for a member who is "the only user" of a tenant: whether anyone else will
need the cap is not known when the first member fills it, and a tenant whose members are few can
raise the percentage (or the cap). A "member" is ``Caller.person_key``: every credential of one
person counts together, each app job's service principal is a member of its own, and anonymous
callers of public routes share one share between them.
"""

from __future__ import annotations

from django.conf import settings


def member_share(tenant_cap: int) -> int:
    """The most of ``tenant_cap`` one member may take: ``TENANT_MEMBER_SHARE_PERCENT`` of it,
    rounded down, at least 1, and below the cap whenever the cap is 2 or more."""
    share = tenant_cap * settings.TENANT_MEMBER_SHARE_PERCENT // 100
    return max(1, min(share, tenant_cap - 1))
