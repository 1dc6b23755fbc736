"""Apps: each app's active version and versions; deploy, roll back, undeploy (``apps_runtime.deploy``)."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from apps_runtime.deploy import deploy_bundle, rollback_app, undeploy_app
from apps_runtime.manifest import DeployRejected, Problem
from apps_runtime.models import App, AppVersion
from console import uploads
from console.access import TenantPage, tenant_page
from console.pages import render_page
from mcp_gateway.tools.prompts.prompts import prompt_catalog
from mcp_gateway.tools.resources.resources import resource_catalog


def _apps(page: TenantPage) -> list[App]:
    versions = Prefetch(
        "versions",
        queryset=AppVersion.objects.for_tenant(page.tenant)
        .select_related("created_by")
        .defer("bundle", "manifest")
        .order_by("-number"),
        to_attr="version_list",
    )
    found = list(
        App.objects.for_tenant(page.tenant)
        .select_related("active_version")
        .annotate(tool_count=Count("tools"))
        .prefetch_related(versions)
        .order_by("name")
    )
    resources = resource_catalog(page.tenant).by_app
    prompts = prompt_catalog(page.tenant).entries
    for app in found:
        # The MCP resources and prompts it offers (who sees each: its rule, besides the app's access).
        app.mcp_resources = resources.get(app.name, [])
        app.mcp_prompts = [entry for entry in prompts if entry.app_name == app.name]
        # What rollback_app would switch to: the newest version before the active one.
        active = app.active_version
        earlier = [v for v in app.version_list if active is not None and v.number < active.number]
        app.previous_version = earlier[0] if earlier else None
        app.screens = sorted(((active.manifest.get("screens") or {}) if active is not None else {}).items())
    return found


def _apps_page(
    request: HttpRequest,
    page: TenantPage,
    *,
    problems: list[Problem] = (),
    warnings: list[Problem] = (),
    status: int = 200,
) -> HttpResponse:
    context = {"apps": _apps(page), "problems": problems, "warnings": warnings}
    return render_page(request, page, "apps.html", context, current="console:apps", status=status)


@tenant_page(admin=True)
def apps(request: HttpRequest, page: TenantPage) -> HttpResponse:
    return _apps_page(request, page)


@csrf_exempt  # CSRF is checked in _deploy, once the upload handler is in place (see console.uploads)
@require_POST
@tenant_page(admin=True)
def deploy(request: HttpRequest, page: TenantPage) -> HttpResponse:
    handler = uploads.install(request)
    try:
        uploads.parse(request)
    except DeployRejected as rejected:
        # Nothing was read, so nothing is done: showing the problem needs no CSRF check.
        return _apps_page(request, page, problems=rejected.problems, status=rejected.status)
    return _deploy(request, page, handler)


@csrf_protect
def _deploy(request: HttpRequest, page: TenantPage, handler: uploads.BundleUploadHandler) -> HttpResponse:
    """Deploy the uploaded zip or folder; problems stay on the page, warnings travel with success."""
    try:
        zip_upload, folder = uploads.uploaded(request, handler)
        if bool(zip_upload) == bool(folder):
            raise DeployRejected([Problem("/", "choose either a .zip file or a folder to deploy")])
        bundle = uploads.bundle_from_zip(zip_upload) if zip_upload else uploads.bundle_from_folder(folder)
        result = deploy_bundle(page.tenant, bundle, acting_user=request.user)
    except DeployRejected as rejected:
        return _apps_page(
            request, page, problems=rejected.problems, warnings=rejected.warnings, status=rejected.status
        )
    tools = len(result.tools)
    messages.success(
        request, f"Deployed {result.app.name} v{result.version.number} with {tools} tool{'s' * (tools != 1)}."
    )
    for warning in result.warnings:
        messages.warning(request, str(warning))
    return redirect("console:apps", slug=page.tenant.slug)


@require_POST
@tenant_page(admin=True)
def rollback(request: HttpRequest, page: TenantPage, app: str) -> HttpResponse:
    try:
        result = rollback_app(page.tenant, app, acting_user=request.user)
    except DeployRejected as rejected:
        return _apps_page(request, page, problems=rejected.problems, status=422)
    messages.success(request, f"Rolled {app} back to v{result.version.number}.")
    return redirect("console:apps", slug=page.tenant.slug)


@require_POST
@tenant_page(admin=True)
def undeploy(request: HttpRequest, page: TenantPage, app: str) -> HttpResponse:
    # One click must not take an app's routes and tools away: the form's box must name the app
    # (the browser asks for it without JavaScript; a post without it changes nothing).
    if request.POST.get("confirm") != app:
        unconfirmed = Problem(
            f"/apps/{app}", f"undeploying {app} stops its routes, tools and jobs: tick the box to confirm"
        )
        return _apps_page(request, page, problems=[unconfirmed], status=400)
    try:
        undeploy_app(page.tenant, app, acting_user=request.user)
    except DeployRejected as rejected:
        return _apps_page(request, page, problems=rejected.problems, status=422)
    messages.success(
        request, (f"Undeployed {app}: its routes, tools and jobs are gone; versions and records stay.")
    )
    return redirect("console:apps", slug=page.tenant.slug)
