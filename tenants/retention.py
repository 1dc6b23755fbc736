"""Bounded storage of tenant changes: audit rows past ``RETENTION_AUDIT_DAYS`` or over the tenant's
``RETENTION_AUDIT_ROWS_PER_TENANT`` go (registered with ``core.retention`` in ``TenantsConfig.ready``)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from core.retention import cutoff, keep_newest
from tenants.models import Tenant, TenantAuditLog


def purge(now: datetime) -> dict[str, int]:
    """Delete tenant audit rows past their retention or over their tenant's cap."""
    changes, _ = TenantAuditLog.all_tenants.filter(
        created_at__lt=cutoff(settings.RETENTION_AUDIT_DAYS, now)
    ).delete()
    for tenant_id in Tenant.objects.values_list("pk", flat=True):
        changes += keep_newest(
            TenantAuditLog.objects.for_tenant(tenant_id), settings.RETENTION_AUDIT_ROWS_PER_TENANT
        )
    return {"tenant_audit": changes}
