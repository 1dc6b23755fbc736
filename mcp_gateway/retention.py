"""Bounded storage of the gateway's audit: tool-call rows past ``RETENTION_AUDIT_DAYS`` or over the
tenant's ``RETENTION_AUDIT_ROWS_PER_TENANT`` go, and approvals that expired that long ago
(registered with ``core.retention`` in ``McpGatewayConfig.ready``). MCP tasks keep their own TTL
and are purged by the tasks' sweep.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from core.retention import cutoff, keep_newest
from mcp_gateway.models import Approval, ToolCallAudit
from tenants.models import Tenant


def purge(now: datetime) -> dict[str, int]:
    """Delete tool-call audit rows past their retention or over their tenant's cap."""
    calls, _ = ToolCallAudit.all_tenants.filter(
        created_at__lt=cutoff(settings.RETENTION_AUDIT_DAYS, now)
    ).delete()
    for tenant_id in Tenant.objects.values_list("pk", flat=True):
        calls += keep_newest(
            ToolCallAudit.objects.for_tenant(tenant_id), settings.RETENTION_AUDIT_ROWS_PER_TENANT
        )
    # An approval is kept as long as the audit rows of the calls it let run, counted from its expiry.
    approvals, _ = Approval.all_tenants.filter(
        expires_at__lt=cutoff(settings.RETENTION_AUDIT_DAYS, now)
    ).delete()
    return {"tool_call_audit": calls, "approvals": approvals}
