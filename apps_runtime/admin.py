"""Django admin: apps with their versions and tools (wire names), records, handler errors, job runs.

Every row here is written by deploys, record calls, the sandbox or the scheduler, which keep wire
names, quotas, catalogs and audit consistent; the admin shows the rows and changes none of them
(an app is taken down with the "Undeploy" action, the same action as ``manage.py undeploy``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from apps_runtime.deploy import undeploy_app
from apps_runtime.manifest import DeployRejected
from apps_runtime.models import App, AppVersion, CallLog, HandlerError, Job, JobRun, Record, Tool
from apps_runtime.sandbox import pool_stats
from tenants.admin import ReadOnlyAdmin


class ToolInline(admin.TabularInline):
    model = Tool
    fields = ["position", "name", "wire_name", "route_key"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["position"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The formset narrows this to the app on the page (a filter the tenant scope cannot see).
        return Tool.all_tenants.get_queryset()


@admin.register(App)
class AppAdmin(ReadOnlyAdmin):
    list_display = ["name", "tenant", "active_version", "updated_at"]
    list_filter = ["tenant"]
    search_fields = ["name", "tenant__slug"]
    inlines = [ToolInline]
    actions = ["undeploy"]
    change_list_template = "admin/apps_runtime/app/change_list.html"

    def get_urls(self) -> list:
        pool = path("sandbox-pool/", self.admin_site.admin_view(self.sandbox_pool), name="sandbox-pool")
        return [pool, *super().get_urls()]

    def sandbox_pool(self, request: HttpRequest) -> HttpResponse:
        """This server process's handler sandbox: its warm workers and what became of them."""
        stats = pool_stats()
        context = {
            **self.admin_site.each_context(request),
            "title": "Sandbox pool",
            "counts": [(key, value) for key, value in stats.items() if key != "recycles"],
            "recycles": sorted(stats["recycles"].items()),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/apps_runtime/sandbox_pool.html", context)

    @admin.action(description="Undeploy selected apps (versions and records are kept)")
    def undeploy(self, request: HttpRequest, queryset: QuerySet) -> None:
        for app in queryset.select_related("tenant"):
            try:
                undeploy_app(app.tenant, app.name, acting_user=request.user)
            except DeployRejected as err:
                self.message_user(request, f"{app}: {err}", messages.WARNING)


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


@admin.register(CallLog)
class CallLogAdmin(ReadOnlyAdmin):
    list_display = ["app", "version_number", "route_key", "caller", "status", "tenant", "created_at"]
    list_filter = ["tenant"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["name", "app", "tenant", "schedule", "run_as", "route_key", "active_since"]
    list_filter = ["tenant"]
    search_fields = ["name", "app__name"]


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyAdmin):
    """Runs are written by the scheduler and the workers only; the admin reads them."""

    list_display = [
        "run_id",
        "app",
        "job",
        "route_key",
        "status",
        "attempts",
        "enqueued_at",
        "started_at",
        "duration_ms",
        "result_status",
        "error_id",
        "tenant",
    ]
    list_filter = ["tenant", "status"]
    search_fields = ["run_id", "job", "error_id", "app__name"]
    date_hierarchy = "enqueued_at"
    list_select_related = ["app", "tenant"]
