"""Access helpers: the only way callers fetch tenants and their rows.

Like Zulip's ``access_*`` helpers, each one fetches within the tenant and gives one error for
"does not exist" and "not yours", so a caller cannot probe what exists elsewhere.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from tenants.exceptions import NotAMember, TenantNotFound, TokenNotFound, UserNotFound
from tenants.lookups import tenant_by_slug
from tenants.managers import ScopeError  # noqa: F401  (re-exported: the scoping failure callers catch)
from tenants.models import ApiToken, Membership, Tenant


def access_tenant(slug: str) -> Tenant:
    """The tenant with this slug, freshly read (one prepared statement: ``lookups.tenant_by_slug``).

    Raises:
        TenantNotFound: no tenant has this slug.
    """
    tenant = tenant_by_slug(slug)
    if tenant is None:
        raise TenantNotFound(slug)
    return tenant


def access_user(username: str) -> AbstractBaseUser:
    """The platform user with this username.

    Raises:
        UserNotFound: no such user.
    """
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist as err:
        raise UserNotFound(username) from err


def access_membership(tenant: Tenant, username: str) -> Membership:
    """The membership of ``username`` in ``tenant``.

    Raises:
        NotAMember: the user does not exist or is not a member of this tenant.
    """
    try:
        return Membership.objects.for_tenant(tenant).select_related("user").get(user__username=username)
    except Membership.DoesNotExist as err:
        raise NotAMember(username, tenant.slug) from err


def access_token(tenant: Tenant, token_id: int) -> ApiToken:
    """The API token with this id in ``tenant``, its user loaded.

    Raises:
        TokenNotFound: no such token in this tenant.
    """
    token = ApiToken.objects.for_tenant(tenant).select_related("tenant", "user").filter(pk=token_id).first()
    if token is None:
        raise TokenNotFound(token_id)
    return token
