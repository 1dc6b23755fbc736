"""Connected accounts: each member connects their own accounts at the operator's OAuth providers, which
their calls to apps declaring a ``connection`` carry (docs/egress.md). Members see and revoke their own;
tenant admins every member's, and connect and revoke the tenant's service accounts, which only jobs and
agents running as ``service`` carry.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps_runtime.egress import connections
from apps_runtime.models import OutboundConnection
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page

_SESSION_KEY = "lcp_outbound_oauth"


@require_GET
@tenant_page(admin=False)
def accounts(request: HttpRequest, page: TenantPage) -> HttpResponse:
    mine = {
        row.provider: row
        for row in OutboundConnection.objects.for_tenant(page.tenant).filter(user=request.user)
    }
    providers = [
        {
            "name": name,
            "apps": apps,
            "connection": mine.get(name),
            "configured": connections.provider(name) is not None,
        }
        for name, apps in sorted(connections.declared_providers(page.tenant).items())
    ]
    everyone = (
        OutboundConnection.objects.for_tenant(page.tenant)
        .filter(user__isnull=False)
        .select_related("user")
        .order_by("provider", "user__username")
        if page.is_admin
        else []
    )
    service = connections.service_accounts(page.tenant) if page.is_admin else []
    context = {"providers": providers, "everyone": everyone, "service_accounts": service}
    return render_page(request, page, "accounts.html", context, current="console:accounts")


def _callback_uri(request: HttpRequest, page: TenantPage) -> str:
    return request.build_absolute_uri(reverse("console:accounts-callback", kwargs={"slug": page.tenant.slug}))


@require_POST
@tenant_page(admin=False)
def connect(request: HttpRequest, page: TenantPage, provider: str) -> HttpResponse:
    prov = connections.provider(provider)
    if prov is None or provider not in connections.declared_providers(page.tenant):
        raise ConsoleNotFound()
    url, state, verifier = connections.begin(prov, _callback_uri(request, page))
    request.session[_SESSION_KEY] = {"state": state, "verifier": verifier, "provider": provider}
    return redirect(url)


@require_POST
@tenant_page(admin=True)
def connect_service(request: HttpRequest, page: TenantPage, provider: str) -> HttpResponse:
    prov = connections.provider(provider)
    if prov is None or provider not in connections.declared_providers(page.tenant):
        raise ConsoleNotFound()
    callback = _callback_uri(request, page)
    return redirect(connections.begin_service(page.tenant, prov, request.user.pk, callback))


@require_GET
@tenant_page(admin=False)
def callback(request: HttpRequest, page: TenantPage) -> HttpResponse:
    back = redirect("console:accounts", slug=page.tenant.slug)
    state = request.GET.get("state", "")
    if state.startswith(connections.SERVICE_STATE_PREFIX):
        return _service_callback(request, page, state, back)
    pending = request.session.pop(_SESSION_KEY, None)
    if not pending or request.GET.get("state") != pending["state"]:
        messages.error(
            request, "That sign-in answer does not belong to a connection you started here: connect again."
        )
        return back
    prov = connections.provider(pending["provider"])
    code = request.GET.get("code")
    if prov is None or not code:
        messages.error(
            request, f"{pending['provider']} did not connect: {request.GET.get('error', 'no code')}"[:200]
        )
        return back
    try:
        connections.finish(
            page.tenant, request.user.pk, prov, code, pending["verifier"], _callback_uri(request, page)
        )
    except connections.ConnectionFailed as err:
        messages.error(request, f"{err}: connect again.")
        return back
    messages.success(request, f"Connected your {prov.name} account.")
    return back


def _service_callback(request: HttpRequest, page: TenantPage, state: str, back: HttpResponse) -> HttpResponse:
    """The provider's answer to a service account connection an admin began (console or API)."""
    code = request.GET.get("code")
    if not code:
        error = request.GET.get("error", "no code")
        messages.error(request, f"The service account did not connect: {error}"[:200])
        return back
    try:
        prov = connections.finish_service(page.tenant, request.user, state, code)
    except connections.ConnectionFailed as err:
        messages.error(request, f"{err}: connect again.")
        return back
    messages.success(
        request, f"Connected the tenant's {prov.name} service account: jobs and service agents carry it."
    )
    return back


@require_POST
@tenant_page(admin=False)
def revoke(request: HttpRequest, page: TenantPage, connection_id: int) -> HttpResponse:
    if not connections.revoke(
        page.tenant, connection_id, acting_user_id=request.user.pk, is_admin=page.is_admin
    ):
        raise ConsoleNotFound()
    messages.success(request, "Disconnected: calls stop carrying that account now.")
    return redirect("console:accounts", slug=page.tenant.slug)
