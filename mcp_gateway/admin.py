from django.contrib import admin

from mcp_gateway.models import ToolCallAudit, ToolTask
from tenants.admin import ReadOnlyAdmin


@admin.register(ToolCallAudit)
class ToolCallAuditAdmin(ReadOnlyAdmin):
    """The audit of tool calls: written by the gateway only, never edited or deleted here."""

    list_display = [
        "created_at",
        "tenant",
        "user",
        "oauth_client_id",
        "agent_name",
        "agent_run_id",
        "wire_name",
        "app_version",
        "outcome",
        "duration_ms",
        "error_id",
    ]
    list_filter = ["tenant", "outcome"]
    search_fields = ["wire_name", "error_id", "oauth_client_id", "agent_run_id"]


@admin.register(ToolTask)
class ToolTaskAdmin(ReadOnlyAdmin):
    """MCP tasks, for operators: written by the gateway only; results are the callers' and not shown."""

    list_display = [
        "task_id",
        "created_at",
        "tenant",
        "owner",
        "wire_name",
        "status",
        "started_at",
        "expires_at",
    ]
    list_filter = ["tenant", "status"]
    search_fields = ["task_id", "wire_name"]
    exclude = ["arguments", "result", "caller"]
