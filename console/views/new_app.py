"""New app from a template, a name and (crud) the collection's fields, deployed as v1 (``console.new_apps``).

The app is deployed at once (the editor opens deployed apps; a draft of an app that does not exist
yet has nowhere to live), then opened in the editor: nothing of it is hidden from the admin.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from app_templates import DESCRIPTIONS, FIELD_TYPES, TEMPLATES
from app_templates.fields import MAX_FIELDS, TYPE_LABELS
from apps_runtime.manifest import DeployRejected, Problem
from console import new_apps
from console.access import TenantPage, tenant_page
from console.pages import render_page


def _page(
    request: HttpRequest,
    page: TenantPage,
    *,
    template: str,
    name: str,
    rows: list[new_apps.Row],
    problems: list[Problem] = (),
    status: int = 200,
) -> HttpResponse:
    row_problems = {p.pointer: p.message for p in problems if p.pointer.startswith("/fields/")}
    context = {
        "templates": [(key, DESCRIPTIONS[key]) for key in TEMPLATES],
        "chosen": template,
        "name": name,
        "rows": [(n, row, row_problems.get(f"/fields/{n}")) for n, row in enumerate(rows, start=1)],
        "types": [(key, TYPE_LABELS[key]) for key in FIELD_TYPES],
        "can_add": len(rows) < MAX_FIELDS,
        "problems": [p for p in problems if not p.pointer.startswith("/fields/")],
        "row_problem_count": len(row_problems),
    }
    return render_page(request, page, "new_app.html", context, current="console:apps", status=status)


@tenant_page(admin=True)
def new_app(request: HttpRequest, page: TenantPage) -> HttpResponse:
    if request.method != "POST":
        chosen = request.GET.get("template", "crud")
        template = chosen if chosen in TEMPLATES else "crud"
        return _page(request, page, template=template, name="", rows=new_apps.default_rows())
    template = request.POST.get("template", "crud")
    template = template if template in TEMPLATES else "crud"
    name = request.POST.get("name", "").strip()[:100]
    rows = new_apps.posted_rows(request.POST)
    action = request.POST.get("action", "create")
    if action == "add":
        rows = [*rows, new_apps.Row("", "string")][:MAX_FIELDS]
        return _page(request, page, template=template, name=name, rows=rows)
    if action.startswith("remove:"):
        drop = action.removeprefix("remove:")
        rows = [row for n, row in enumerate(rows, start=1) if str(n) != drop]
        return _page(request, page, template=template, name=name, rows=rows)
    try:
        result = new_apps.create_app(page.tenant, template, name, rows, acting_user=request.user)
    except DeployRejected as rejected:
        return _page(
            request, page, template=template, name=name, rows=rows, problems=rejected.problems, status=422
        )
    tools = len(result.tools)
    messages.success(
        request,
        f"Created {name} from the {template} template and deployed it as v{result.version.number} "
        f"with {tools} tool{'s' * (tools != 1)}.",
    )
    for warning in result.warnings:
        messages.warning(request, str(warning))
    return redirect("console:app-edit", slug=page.tenant.slug, app=name)
