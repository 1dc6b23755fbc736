"""Connect a client: this tenant's endpoint filled into each client's configuration."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from console.access import TenantPage, tenant_page
from console.pages import render_page
from console.snippets import TOKEN_VARIABLE, snippets


@tenant_page(admin=False)
def connect(request: HttpRequest, page: TenantPage) -> HttpResponse:
    tenant = page.tenant
    url = request.build_absolute_uri(f"/t/{tenant.slug}/mcp")
    context = {
        "endpoint": url,
        "snippets": snippets(tenant.slug, url),
        "token_variable": TOKEN_VARIABLE,
        "mcp_on": tenant.setting("mcpServer"),
    }
    return render_page(request, page, "connect.html", context, current="console:connect")
