"""Small boolean permission classes for the tenant API."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from tenants.authority import Standing, standing
from tenants.models import ApiToken


class _TenantPermission(BasePermission):
    """Who the user is in the view's tenant (``authority.standing``), as ``allows`` judges it.

    A token only works in the tenant it was issued for, and a read-only token only reads: one rule,
    for every subclass.
    """

    def allows(self, found: Standing) -> bool:
        raise NotImplementedError

    def has_permission(self, request: Request, view: APIView) -> bool:
        tenant = view.slug_tenant
        token = request.auth if isinstance(request.auth, ApiToken) else None
        if token is not None:
            if tenant is None or token.tenant_id != tenant.pk:
                return False
            if token.read_only and request.method not in SAFE_METHODS:
                return False
        if tenant is None:
            return bool(request.user.is_superuser)
        return self.allows(standing(tenant, request.user))


class IsTenantMember(_TenantPermission):
    """Members of the view's tenant and platform superusers."""

    message = "Only members of this tenant may do this."

    def allows(self, found: Standing) -> bool:
        return found.is_member


class IsTenantAdmin(_TenantPermission):
    """Tenant admins of the view's tenant and platform superusers."""

    message = "Only tenant admins may do this."

    def allows(self, found: Standing) -> bool:
        return found.is_admin
