"""Tools: every tool of the tenant as the gateway holds it; Preview as: one caller's exact tools/list."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse

from console.access import TenantPage, tenant_page
from console.forms import PreviewForm, add_action_error
from console.pages import render_page
from console.reach import who_reaches
from mcp_gateway.tools.call import preview
from mcp_gateway.tools.catalog.catalog import catalog_for
from tenants.exceptions import TenantError
from tenants.models import ApiToken, Membership
from tenants.roles import parse_roles


@tenant_page(admin=True)
def tools(request: HttpRequest, page: TenantPage) -> HttpResponse:
    entries = catalog_for(page.tenant).entries
    rows = [
        {
            "entry": entry,
            "annotations": entry.tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if entry.tool.annotations
            else {},
            "reach": who_reaches(entry),
        }
        for entry in entries
    ]
    context = {"rows": rows, "app_tools_on": page.tenant.setting(preview.APP_TOOLS)}
    return render_page(request, page, "tools.html", context, current="console:tools")


@tenant_page(admin=True)
def preview_as(request: HttpRequest, page: TenantPage) -> HttpResponse:
    """A GET form: choosing a caller changes nothing, so the result has its own shareable URL."""
    tenant = page.tenant
    members = list(Membership.objects.for_tenant(tenant).select_related("user").order_by("user__username"))
    tokens = [
        t
        for t in ApiToken.objects.for_tenant(tenant).select_related("user").order_by("-created_at")
        if t.is_active
    ]
    form = PreviewForm(request.GET if "as" in request.GET else None, members=members, tokens=tokens)
    result, status = None, 200
    if form.is_bound:
        if form.is_valid():
            try:
                result = _preview(tenant, form.cleaned_data)
            except TenantError as err:
                add_action_error(form, err)
        if not form.is_valid():
            status = 400
    context = {
        "form": form,
        "result": result,
        "estimate_rule": preview.ESTIMATE_RULE,
        "wire_version": preview.WIRE_VERSION,
        "result_json": json.dumps(result.listing.tools, indent=2, ensure_ascii=False) if result else "",
        "other_lists": [
            (
                key,
                listing,
                [item.get("uri") or item.get("uriTemplate") or item["name"] for item in listing.tools],
            )
            for key, listing in (result.extras.items() if result else ())
        ],
    }
    return render_page(request, page, "preview.html", context, current="console:preview", status=status)


def _preview(tenant, data: dict) -> preview.Preview:
    """Raises: InvalidValue (a role name), NotAMember, TokenNotFound."""
    read_only = data["read_only"]
    if data["as_"] == "member":
        return preview.preview(tenant, preview.member_caller(tenant, data["member"], read_only=read_only))
    if data["as_"] == "roles":
        roles = parse_roles(data["roles"])
        return preview.preview(tenant, preview.role_caller(tenant, roles, read_only=read_only))
    caller, refusal = preview.token_caller(tenant, data["token"])
    return preview.preview(tenant, caller, refusal=refusal)
