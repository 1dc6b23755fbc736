"""What happened in the tenant: the audit of tool calls and of changes, handler errors, and job runs."""

from __future__ import annotations

from datetime import UTC

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps_runtime.models import HandlerError, JobRun
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.forms import RunFilterForm
from console.pages import render_page
from mcp_gateway.api.audit_filters import ToolCallFilter
from mcp_gateway.models import ToolCallAudit
from tenants.api.change_filters import ChangeFilter
from tenants.models import TenantAuditLog

PAGE_SIZE = 50


def _paged(request: HttpRequest, rows):
    """One page of ``rows``; a page number past the end gives the last page."""
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))


def _query_without_page(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


@tenant_page(admin=True)
def audit(request: HttpRequest, page: TenantPage) -> HttpResponse:
    rows = (
        ToolCallAudit.objects.for_tenant(page.tenant)
        .select_related("user", "token")
        .order_by("-created_at", "-id")
    )
    filters = ToolCallFilter(request.GET, queryset=rows)  # the API's filters, the same names
    form, status = filters.form, 200
    with timezone.override(UTC):  # the page asks for times in UTC, whatever the server's zone
        valid = filters.is_valid()
    rows = filters.qs if valid else rows.none()
    if not valid:
        status = 400
    context = {"form": form, "rows": _paged(request, rows), "query": _query_without_page(request)}
    return render_page(request, page, "audit.html", context, current="console:audit", status=status)


@tenant_page(admin=True)
def errors(request: HttpRequest, page: TenantPage) -> HttpResponse:
    wanted = request.GET.get("id", "").strip()
    if wanted:
        return redirect("console:error", slug=page.tenant.slug, error_id=wanted)
    rows = HandlerError.objects.for_tenant(page.tenant).select_related("app").defer("trace", "logs")
    context = {"rows": _paged(request, rows.order_by("-created_at", "-id")), "query": ""}
    return render_page(request, page, "errors.html", context, current="console:errors")


@tenant_page(admin=True)
def error_detail(request: HttpRequest, page: TenantPage, error_id: str) -> HttpResponse:
    error = (
        HandlerError.objects.for_tenant(page.tenant).select_related("app").filter(error_id=error_id).first()
    )
    if error is None:
        raise ConsoleNotFound()
    return render_page(request, page, "error_detail.html", {"error": error}, current="console:errors")


@tenant_page(admin=True)
def runs(request: HttpRequest, page: TenantPage) -> HttpResponse:
    form = RunFilterForm(request.GET)
    rows = JobRun.objects.for_tenant(page.tenant).select_related("app").order_by("-enqueued_at", "-id")
    status = 200
    if form.is_valid():
        data = form.cleaned_data
        if data["app"]:
            rows = rows.filter(app__name=data["app"])
        if data["job"]:
            rows = rows.filter(job=data["job"])
        if data["status"]:
            rows = rows.filter(status=data["status"])
    else:
        rows, status = rows.none(), 400
    context = {"form": form, "rows": _paged(request, rows), "query": _query_without_page(request)}
    return render_page(request, page, "runs.html", context, current="console:runs", status=status)


@tenant_page(admin=True)
def run_detail(request: HttpRequest, page: TenantPage, run_id: str) -> HttpResponse:
    run = JobRun.objects.for_tenant(page.tenant).select_related("app").filter(run_id=run_id).first()
    if run is None:
        raise ConsoleNotFound()
    context = {"run": run, "attempts": [_attempt_row(entry) for entry in run.attempt_log]}
    return render_page(request, page, "run_detail.html", context, current="console:runs")


def _attempt_row(entry: dict) -> dict:
    """An attempt log entry with its ISO times read back, so the page shows every time the same way."""
    row = dict(entry)
    for key in ("started_at", "finished_at"):
        row[key] = parse_datetime(entry[key]) if isinstance(entry.get(key), str) else None
    return row


@tenant_page(admin=True)
def changes(request: HttpRequest, page: TenantPage) -> HttpResponse:
    rows = (
        TenantAuditLog.objects.for_tenant(page.tenant)
        .select_related("acting_user")
        .order_by("-created_at", "-id")
    )
    filters = ChangeFilter(request.GET, queryset=rows)  # the API's filters, the same names
    with timezone.override(UTC):
        valid = filters.is_valid()
    rows, status = (filters.qs, 200) if valid else (rows.none(), 400)
    context = {"form": filters.form, "rows": _paged(request, rows), "query": _query_without_page(request)}
    return render_page(request, page, "changes.html", context, current="console:changes", status=status)
