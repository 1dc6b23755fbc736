"""Who may open which console page: the one gate every console view goes through.

Admin pages are for the tenant's admins and platform superusers (``tenants.authority``'s rule);
member pages (their own tokens and connections, Connect) for any member. Anyone else gets the same
404 as for a tenant that does not exist, so the console never tells who has which tenants.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from console.csp import render_under_policy
from console.exceptions import ConsoleNotFound
from tenants.authority import standing
from tenants.lookups import tenant_by_slug
from tenants.models import Membership, Tenant


@dataclass(frozen=True)
class TenantPage:
    """The tenant a console page is about, and what the signed-in user may do there."""

    tenant: Tenant
    user: AbstractBaseUser
    membership: Membership | None
    is_admin: bool


def open_tenant(user: AbstractBaseUser, slug: str, *, admin: bool) -> TenantPage:
    """The tenant ``slug`` as ``user`` may see it.

    Raises:
        ConsoleNotFound: no such tenant, ``user`` is neither a member nor a superuser, or the page
            is for admins and ``user`` is not one.
    """
    tenant = tenant_by_slug(slug)
    if tenant is None:
        raise ConsoleNotFound()
    found = standing(tenant, user)
    if not found.is_member or (admin and not found.is_admin):
        raise ConsoleNotFound()
    return TenantPage(tenant=tenant, user=user, membership=found.membership, is_admin=found.is_admin)


def tenant_page(*, admin: bool) -> Callable:
    """Decorate a view ``(request, page, **kwargs)`` under ``/console/<slug>/``: sign-in, then the gate."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
            try:
                return view(request, open_tenant(request.user, slug, admin=admin), **kwargs)
            except ConsoleNotFound:
                # The console's own page, also with DEBUG on: Django's debug 404 would list every URL
                # pattern to a member who only opened an admin page.
                return render_under_policy(request, "console/not_found.html", status=404)

        wrapped.admin_only = admin
        return wrapped

    return decorate


def tenants_of(user: AbstractBaseUser) -> QuerySet[Tenant]:
    """The tenants ``user`` may open in the console: their memberships, or every tenant for superusers."""
    if user.is_superuser:
        return Tenant.objects.order_by("slug")
    return Tenant.objects.filter(memberships__user_id=user.pk).order_by("slug")
