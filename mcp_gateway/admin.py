from django.contrib import admin

from apps_runtime.admin import ReadOnlyAdmin
from mcp_gateway.models import ToolCallAudit


@admin.register(ToolCallAudit)
class ToolCallAuditAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "tenant",
        "user",
        "wire_name",
        "app_version",
        "outcome",
        "duration_ms",
        "error_id",
    ]
    list_filter = ["tenant", "outcome"]
    search_fields = ["wire_name", "error_id"]
