"""Connected accounts: each member connects their own accounts at the operator's OAuth providers, which
their calls to apps declaring a ``connection`` carry (docs/egress.md). Members see and revoke their own;
tenant admins every member's.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps_runtime.egress import connections
from apps_runtime.models import App, OutboundConnection
from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page

_SESSION_KEY = "lcp_outbound_oauth"


def _declared(page: TenantPage) -> dict[str, list[str]]:
    """Provider name -> the apps whose active version declares a connection to it."""
    found: dict[str, list[str]] = {}
    apps = (
        App.objects.for_tenant(page.tenant)
        .filter(active_version__isnull=False)
        .select_related("active_version")
    )
    for app in apps.defer("active_version__bundle").order_by("name"):
        for spec in (app.active_version.manifest.get("connections") or {}).values():
            found.setdefault(spec.get("provider", ""), []).append(app.name)
    return found


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
        for name, apps in sorted(_declared(page).items())
    ]
    everyone = (
        OutboundConnection.objects.for_tenant(page.tenant)
        .select_related("user")
        .order_by("provider", "user__username")
        if page.is_admin
        else []
    )
    context = {"providers": providers, "everyone": everyone}
    return render_page(request, page, "accounts.html", context, current="console:accounts")


def _callback_uri(request: HttpRequest, page: TenantPage) -> str:
    return request.build_absolute_uri(reverse("console:accounts-callback", kwargs={"slug": page.tenant.slug}))


@require_POST
@tenant_page(admin=False)
def connect(request: HttpRequest, page: TenantPage, provider: str) -> HttpResponse:
    prov = connections.provider(provider)
    if prov is None or provider not in _declared(page):
        raise ConsoleNotFound()
    url, state, verifier = connections.begin(prov, _callback_uri(request, page))
    request.session[_SESSION_KEY] = {"state": state, "verifier": verifier, "provider": provider}
    return redirect(url)


@require_GET
@tenant_page(admin=False)
def callback(request: HttpRequest, page: TenantPage) -> HttpResponse:
    pending = request.session.pop(_SESSION_KEY, None)
    back = redirect("console:accounts", slug=page.tenant.slug)
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


@require_POST
@tenant_page(admin=False)
def revoke(request: HttpRequest, page: TenantPage, connection_id: int) -> HttpResponse:
    if not connections.revoke(
        page.tenant, connection_id, acting_user_id=request.user.pk, is_admin=page.is_admin
    ):
        raise ConsoleNotFound()
    messages.success(request, "Disconnected: calls stop carrying that account now.")
    return redirect("console:accounts", slug=page.tenant.slug)
