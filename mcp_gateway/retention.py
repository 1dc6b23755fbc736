"""Platform-wide purge of what grows with use: ``manage.py purge_expired`` and beat's hourly entry.

Each kind of row has a retention period and a per-tenant cap (``RETENTION_*`` settings, README
"Configuration"): the runtime's error records and finished job runs (``apps_runtime.retention``),
the audit rows of tool calls and of tenant changes, and OAuth clients that registered and never
completed a grant. MCP tasks keep their own TTL and are purged by the tasks' sweep.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from apps_runtime import retention as runtime_retention
from core.retention import cutoff, keep_newest
from mcp_gateway.models import ToolCallAudit
from oauth.clients import purge_unused_clients
from tenants.models import Tenant, TenantAuditLog


def purge_expired(now: datetime | None = None) -> dict[str, int]:
    """Delete every row past its retention or over its tenant's cap; the counts deleted, by kind."""
    tenant_ids = list(Tenant.objects.values_list("pk", flat=True))
    purged = runtime_retention.purge(tenant_ids, now)
    audit_cutoff = cutoff(settings.RETENTION_AUDIT_DAYS, now)
    calls, _ = ToolCallAudit.all_tenants.filter(created_at__lt=audit_cutoff).delete()
    changes, _ = TenantAuditLog.all_tenants.filter(created_at__lt=audit_cutoff).delete()
    for tenant_id in tenant_ids:
        calls += keep_newest(
            ToolCallAudit.objects.for_tenant(tenant_id), settings.RETENTION_AUDIT_ROWS_PER_TENANT
        )
        changes += keep_newest(
            TenantAuditLog.objects.for_tenant(tenant_id), settings.RETENTION_AUDIT_ROWS_PER_TENANT
        )
    purged.update(tool_call_audit=calls, tenant_audit=changes, oauth_clients=purge_unused_clients(now))
    return purged
