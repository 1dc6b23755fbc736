"""The app editor: an app's files in the browser, checked by the deploy's validator, deployed as a version.

Progressive: a plain form (one textarea per file) that works without JavaScript. Saving a draft keeps
it in the admin's session and changes nothing for callers; "Check" answers what a deploy would; "Deploy"
is the console's (and the command line's) one deploy action, audited.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import DeployRejected
from apps_runtime.models import App
from console import codemirror, drafts
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page

FIELD = "file:"


def _app(page: TenantPage, name: str) -> App:
    app = App.objects.for_tenant(page.tenant).select_related("active_version").filter(name=name).first()
    if app is None:
        raise ConsoleNotFound()
    return app


def _posted(request: HttpRequest, known: dict[str, str]) -> dict[str, str]:
    """The files as posted: only paths the app (or its draft) holds; line ends as the browser sends them."""
    files = dict(known)
    for key, value in request.POST.items():
        path = key.removeprefix(FIELD)
        if key.startswith(FIELD) and path in known:
            files[path] = value.replace("\r\n", "\n")
    return files


@tenant_page(admin=True)
def edit_app(request: HttpRequest, page: TenantPage, app: str) -> HttpResponse:
    found = _app(page, app)
    deployed = drafts.deployed_files(found)
    saved = drafts.draft(request.session, page.tenant, app)
    files = saved if saved is not None else deployed
    findings: list[drafts.Finding] | None = None
    status = 200
    if request.method == "POST":
        files = _posted(request, files)
        action = request.POST.get("action", "check")
        if action == "discard":
            drafts.discard_draft(request.session, page.tenant, app)
            messages.success(request, "Draft discarded.")
            return redirect("console:app-edit", slug=page.tenant.slug, app=app)
        if action == "deploy":
            try:
                result = deploy_bundle(page.tenant, drafts.bundle_of(files), acting_user=request.user)
            except DeployRejected as rejected:
                findings = drafts.findings(
                    files.get(drafts.MANIFEST, ""), rejected.problems, rejected.warnings
                )
                status = 422
            else:
                drafts.discard_draft(request.session, page.tenant, app)
                messages.success(request, f"Deployed {app} v{result.version.number}.")
                for warning in result.warnings:
                    messages.warning(request, str(warning))
                return redirect("console:app-edit", slug=page.tenant.slug, app=app)
        else:
            try:
                drafts.save_draft(request.session, page.tenant, app, files)
            except DeployRejected as rejected:
                findings, status = drafts.findings("", rejected.problems, []), 422
            else:
                findings = drafts.check(page.tenant, files)
                if action == "save":
                    messages.success(request, "Draft saved: nothing changes for callers until you deploy.")
    if findings is not None and "application/json" in request.headers.get("Accept", ""):
        # The live check (editor.js): the same answer as the Check button, as data.
        return JsonResponse(
            {"findings": [vars(f) for f in findings], "diff": drafts.diff(deployed, files)}, status=status
        )
    context = {
        "app": found,
        "files": files,
        "findings": findings,
        "problems": [f for f in findings or [] if not f.warning],
        "has_draft": drafts.draft(request.session, page.tenant, app) is not None,
        "diff": drafts.diff(deployed, files),
    }
    # style_nonce: CodeMirror injects its styles (code_editor.js), allowed by this response's nonce.
    return render_page(
        request, page, "app_edit.html", context, current="console:apps", status=status, style_nonce=True
    )


@require_GET
@cache_control(max_age=300)
def editor_script(request: HttpRequest) -> HttpResponse:
    """The editor's small script, served by the platform (no inline script, no static files server)."""
    return HttpResponse(render_to_string("console/editor.js"), content_type="text/javascript")


@require_GET
@cache_control(max_age=300)
def code_editor_script(request: HttpRequest) -> HttpResponse:
    """The code editor (an ES module): CodeMirror on each file, from the bundle of this release."""
    bundle_url = f"{reverse('console:codemirror-bundle')}?v={codemirror.recorded_digest()[:16]}"
    return HttpResponse(
        render_to_string("console/code_editor.js", {"bundle_url": bundle_url}), content_type="text/javascript"
    )


@require_GET
def codemirror_bundle(request: HttpRequest) -> HttpResponse:
    """The vendored CodeMirror 6 bundle; kept by browsers for a year when asked for by its digest."""
    bundle = codemirror.served_bundle()
    gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
    response = HttpResponse(
        bundle.gzipped if gzipped else bundle.body, content_type="text/javascript; charset=utf-8"
    )
    if gzipped:
        response["Content-Encoding"] = "gzip"
    response["Vary"] = "Accept-Encoding"
    current = request.GET.get("v") == codemirror.recorded_digest()[:16]
    response["Cache-Control"] = "public, max-age=31536000, immutable" if current else "max-age=300"
    return response
