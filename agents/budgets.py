"""The tenant's daily agent budgets (UTC days): runs started, and model tokens used.

Both are tenant settings (``agentRunsPerDay``, ``agentTokensPerDay``). A run is refused before it
starts when either is spent; a running run's token limit is at most what the day has left.
"""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.db.models import QuerySet, Sum
from django.utils import timezone

from agents.exceptions import BudgetExhausted
from agents.models import AgentRun
from tenants.models import Tenant


def _day_start() -> datetime:
    return datetime.combine(timezone.now().date(), time.min, tzinfo=UTC)


def _today(tenant: Tenant) -> QuerySet[AgentRun]:
    return AgentRun.objects.for_tenant(tenant).filter(created_at__gte=_day_start())


def tokens_used_today(tenant: Tenant) -> int:
    return _today(tenant).aggregate(total=Sum("total_tokens"))["total"] or 0


def _daily_limit(tenant: Tenant, key: str) -> int:
    # tenants.tenant_settings declares both limits as integers; the tenant's value was checked on write.
    return tenant.number(key)


def tokens_left_today(tenant: Tenant) -> int:
    return max(_daily_limit(tenant, "agentTokensPerDay") - tokens_used_today(tenant), 0)


def check_budget(tenant: Tenant) -> None:
    """Raises: BudgetExhausted: no run may start today (runs or tokens spent)."""
    runs_limit = _daily_limit(tenant, "agentRunsPerDay")
    runs = _today(tenant).count()
    if runs >= runs_limit:
        raise BudgetExhausted("agentRunsPerDay", runs_limit, runs)
    tokens_limit = _daily_limit(tenant, "agentTokensPerDay")
    tokens = tokens_used_today(tenant)
    if tokens >= tokens_limit:
        raise BudgetExhausted("agentTokensPerDay", tokens_limit, tokens)
