from django.contrib import admin

from mcp_gateway.models import ToolCallAudit
from tenants.admin import ReadOnlyAdmin


@admin.register(ToolCallAudit)
class ToolCallAuditAdmin(ReadOnlyAdmin):
    """The audit of tool calls: written by the gateway only, never edited or deleted here."""

    list_display = [
        "created_at",
        "tenant",
        "user",
        "oauth_client_id",
        "wire_name",
        "app_version",
        "outcome",
        "duration_ms",
        "error_id",
    ]
    list_filter = ["tenant", "outcome"]
    search_fields = ["wire_name", "error_id", "oauth_client_id"]
