"""Connections: OAuth clients members allowed into the tenant; members see and revoke their own, admins all.

Listing and revoking go through ``oauth.connections``, as the connections API does.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from console.access import TenantPage, tenant_page
from console.exceptions import ConsoleNotFound
from console.pages import render_page
from oauth.connections import (
    REASON_USER,
    access_connection,
    narrow_connection,
    revoke_connection,
    visible_connections,
)
from oauth.consent import describe_client
from oauth.exceptions import ConnectionNotFound, NotNarrower


@tenant_page(admin=False)
def connections(request: HttpRequest, page: TenantPage) -> HttpResponse:
    rows = [
        (connection, describe_client(connection.application))
        for connection in visible_connections(page.tenant, request.user).order_by("-created_at")
    ]
    return render_page(request, page, "connections.html", {"rows": rows}, current="console:connections")


@require_POST
@tenant_page(admin=False)
def revoke(request: HttpRequest, page: TenantPage, connection_id: int) -> HttpResponse:
    try:
        connection = access_connection(page.tenant, request.user, connection_id)
    except ConnectionNotFound as err:
        raise ConsoleNotFound() from err
    revoke_connection(connection, acting_user=request.user, reason=REASON_USER)
    messages.success(
        request, f"Revoked the connection of {connection.client_id}; its tokens stop working now."
    )
    return redirect("console:connections", slug=page.tenant.slug)


@require_POST
@tenant_page(admin=False)
def narrow(request: HttpRequest, page: TenantPage, connection_id: int) -> HttpResponse:
    """Keep only some of a connection's apps (``scopes``: app scopes, space-separated); widening
    needs the person's consent again."""
    try:
        connection = access_connection(page.tenant, request.user, connection_id)
    except ConnectionNotFound as err:
        raise ConsoleNotFound() from err
    try:
        narrow_connection(connection, request.POST.get("scopes", "").split(), acting_user=request.user)
    except NotNarrower as err:
        messages.error(request, str(err))
    else:
        messages.success(request, f"The connection of {connection.client_id} now carries only those apps.")
    return redirect("console:connections", slug=page.tenant.slug)
