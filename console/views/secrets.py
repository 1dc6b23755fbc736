"""Secrets: tenant admins set, list (names, when set, which apps declare each) and delete them; a value
is never shown again once set (docs/egress.md).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from apps_runtime.egress import secrets as tenant_secrets
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page


@require_GET
@tenant_page(admin=True)
def secrets_page(request: HttpRequest, page: TenantPage) -> HttpResponse:
    rows = tenant_secrets.listing(page.tenant)
    return render_page(request, page, "secrets.html", {"rows": rows}, current="console:secrets")


@require_POST
@tenant_page(admin=True)
def set_secret(request: HttpRequest, page: TenantPage) -> HttpResponse:
    name = request.POST.get("name", "").strip()
    try:
        tenant_secrets.set_secret(page.tenant, name, request.POST.get("value", ""))
    except tenant_secrets.SecretInvalid as err:
        messages.error(request, str(err))
    else:
        messages.success(request, f"Secret {name} is set.")
    return redirect("console:secrets", slug=page.tenant.slug)


@require_POST
@tenant_page(admin=True)
def delete_secret(request: HttpRequest, page: TenantPage, name: str) -> HttpResponse:
    if not tenant_secrets.delete_secret(page.tenant, name):
        raise ConsoleNotFound()
    messages.success(request, f"Secret {name} is deleted: requests that use it are refused now.")
    return redirect("console:secrets", slug=page.tenant.slug)
