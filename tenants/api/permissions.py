"""Small boolean permission classes for the tenant API."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from tenants.models import ApiToken, Membership


class _TenantPermission(BasePermission):
    """Platform superusers, and members of the view's tenant that ``membership`` further narrows.

    A token only works in the tenant it was issued for, and a read-only token only reads: one rule,
    for every subclass.
    """

    membership: dict = {}

    def has_permission(self, request: Request, view: APIView) -> bool:
        tenant = view.tenant
        token = request.auth if isinstance(request.auth, ApiToken) else None
        if token is not None:
            if tenant is None or token.tenant_id != tenant.pk:
                return False
            if token.read_only and request.method not in SAFE_METHODS:
                return False
        if request.user.is_superuser:
            return True
        if tenant is None:
            return False
        members = Membership.objects.for_tenant(tenant)
        return members.filter(user_id=request.user.pk, **self.membership).exists()


class IsTenantMember(_TenantPermission):
    """Members of the view's tenant and platform superusers."""

    message = "Only members of this tenant may do this."


class IsTenantAdmin(_TenantPermission):
    """Tenant admins of the view's tenant and platform superusers."""

    message = "Only tenant admins may do this."
    membership = {"is_admin": True}
