"""Connect a client: this tenant's endpoint filled into each client's configuration."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from console.access import TenantPage, tenant_page
from console.pages import render_page
from console.snippets import TOKEN_VARIABLE, snippets
from oauth.exceptions import OriginNotConfigured
from oauth.origin import request_origin, resource_url


@tenant_page(admin=False)
def connect(request: HttpRequest, page: TenantPage) -> HttpResponse:
    tenant = page.tenant
    try:
        origin, guessed = request_origin(request), False
    except OriginNotConfigured:
        # Tokens work without the public origin; only OAuth needs it. Say the URL is a guess.
        origin, guessed = f"{request.scheme}://{request.get_host()}", True
    url = resource_url(origin, tenant.slug)
    context = {
        "endpoint": url,
        "guessed": guessed,
        "snippets": snippets(tenant.slug, url),
        "token_variable": TOKEN_VARIABLE,
        "mcp_on": tenant.setting("mcpServer"),
    }
    return render_page(request, page, "connect.html", context, current="console:connect")
