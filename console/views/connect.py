"""Connect a client: this tenant's endpoint filled into each client's configuration."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from console.access import TenantPage, tenant_page
from console.pages import render_page
from console.snippets import TOKEN_VARIABLE, snippets
from core.origin import mcp_endpoint_url, public_origin


@tenant_page(admin=False)
def connect(request: HttpRequest, page: TenantPage) -> HttpResponse:
    tenant = page.tenant
    origin = public_origin(request.scheme, request.get_host())
    guessed = origin is None
    if guessed:
        # No public origin (PUBLIC_BASE_URL unset outside DEBUG): show the one this page was read
        # at, and say it is a guess; the endpoint itself names none.
        origin = f"{request.scheme}://{request.get_host()}"
    url = mcp_endpoint_url(origin, tenant.slug)
    context = {
        "endpoint": url,
        "guessed": guessed,
        "snippets": snippets(tenant.slug, url),
        "token_variable": TOKEN_VARIABLE,
        "mcp_on": tenant.setting("mcpServer"),
    }
    return render_page(request, page, "connect.html", context, current="console:connect")
