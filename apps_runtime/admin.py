"""Django admin: apps with their versions and tools (wire names), records, handler errors, job runs."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps_runtime.models import App, AppVersion, HandlerError, Job, JobRun, Record, Tool
from tenants.admin import AllTenantsAdmin


class ReadOnlyAdmin(AllTenantsAdmin):
    """Deploys are the only way to change these rows; the admin shows them."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ToolInline(admin.TabularInline):
    model = Tool
    fields = ["position", "name", "wire_name", "route_key"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["position"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(App)
class AppAdmin(ReadOnlyAdmin):
    list_display = ["name", "tenant", "active_version", "updated_at"]
    list_filter = ["tenant"]
    search_fields = ["name", "tenant__slug"]
    inlines = [ToolInline]


@admin.register(AppVersion)
class AppVersionAdmin(ReadOnlyAdmin):
    list_display = ["app", "number", "tenant", "content_hash", "created_at"]
    list_filter = ["tenant"]
    exclude = ["bundle"]


@admin.register(Tool)
class ToolAdmin(ReadOnlyAdmin):
    list_display = ["wire_name", "name", "app", "tenant", "route_key"]
    list_filter = ["tenant"]
    search_fields = ["wire_name", "name"]


@admin.register(Record)
class RecordAdmin(ReadOnlyAdmin):
    list_display = ["record_id", "collection", "app", "tenant", "updated_at", "updated_by"]
    list_filter = ["tenant", "collection"]


@admin.register(HandlerError)
class HandlerErrorAdmin(ReadOnlyAdmin):
    list_display = ["error_id", "kind", "app", "route_key", "caller", "tenant", "created_at"]
    list_filter = ["tenant", "kind"]
    search_fields = ["error_id"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["name", "app", "tenant", "schedule", "run_as", "route_key", "active_since"]
    list_filter = ["tenant"]
    search_fields = ["name", "app__name"]


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyAdmin):
    """Runs are written by the scheduler and the workers only; the admin reads them."""

    list_display = [
        "run_id", "app", "job", "route_key", "status", "attempts", "enqueued_at", "started_at",
        "duration_ms", "result_status", "error_id", "tenant",
    ]
    list_filter = ["tenant", "status"]
    search_fields = ["run_id", "job", "error_id", "app__name"]
    date_hierarchy = "enqueued_at"
    list_select_related = ["app", "tenant"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
