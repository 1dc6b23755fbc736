"""``/console/``: the tenants the signed-in user may open; ``/console/<tenant>/``: where to start."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from console.access import TenantPage, tenant_page, tenants_of
from console.csp import render_under_policy
from tenants.models import Membership


@login_required
def index(request: HttpRequest) -> HttpResponse:
    tenants = list(tenants_of(request.user))
    memberships = {
        m.tenant_id: m for m in Membership.all_tenants.filter(user_id=request.user.pk, tenant__in=tenants)
    }
    rows = [(tenant, memberships.get(tenant.pk)) for tenant in tenants]
    return render_under_policy(request, "console/index.html", {"rows": rows})


@tenant_page(admin=False)
def tenant_home(request: HttpRequest, page: TenantPage) -> HttpResponse:
    """Admins start at their apps; members at connecting a client."""
    target = "console:apps" if page.is_admin else "console:connect"
    return redirect(target, slug=page.tenant.slug)
