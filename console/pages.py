"""Rendering a console page: the tenant, the navigation this user may follow, and the template."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from console.access import TenantPage
from console.csp import render_under_policy

# (label, url name, admin only), in the order of the navigation bar.
NAVIGATION = [
    ("Apps", "console:apps", True),
    ("Tools", "console:tools", True),
    ("Preview as", "console:preview", True),
    ("Settings", "console:settings", True),
    ("Members", "console:members", True),
    ("Tokens", "console:tokens", False),
    ("Connections", "console:connections", False),
    ("Connected accounts", "console:accounts", False),
    ("Secrets", "console:secrets", True),
    ("Approvals", "console:approvals", False),
    ("Agents", "console:agents", False),
    ("Audit", "console:audit", True),
    ("Changes", "console:changes", True),
    ("Errors", "console:errors", True),
    ("Job runs", "console:runs", True),
    ("Connect a client", "console:connect", False),
]


def render_page(
    request: HttpRequest,
    page: TenantPage,
    template: str,
    context: dict | None = None,
    *,
    current: str,
    status: int = 200,
    style_nonce: bool = False,
) -> HttpResponse:
    """Render ``template`` for ``page``; ``current`` is the url name of the navigation entry shown."""
    nav = [(label, name) for label, name, admin_only in NAVIGATION if page.is_admin or not admin_only]
    base = {"page": page, "tenant": page.tenant, "nav": nav, "current": current}
    return render_under_policy(
        request, f"console/{template}", {**base, **(context or {})}, status=status, style_nonce=style_nonce
    )
