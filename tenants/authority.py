"""Who may change what in a tenant: each rule once, checked by the actions themselves.

Every action in ``tenants.actions`` calls these checks, so the API, the Django admin, the commands
and any future console share one rule each instead of each edge remembering it. ``acting_user=None``
is the operator at the shell (management commands, seeding): they already hold the database, so
nothing is refused to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from tenants.exceptions import NotAllowed, NotAMember
from tenants.models import Membership, Tenant
from tenants.scoping import access_membership, access_user

PLATFORM_OPERATORS = "platform superusers"


def is_platform_operator(acting_user: AbstractBaseUser | None) -> bool:
    """The shell operator (None) or a platform superuser: both may do anything to any tenant."""
    return acting_user is None or bool(getattr(acting_user, "is_superuser", False))


def require_platform_operator(what: str, acting_user: AbstractBaseUser | None) -> None:
    """Refuse ``what`` to anyone but the shell operator and platform superusers.

    Raises:
        NotAllowed: acting_user is neither.
    """
    if not is_platform_operator(acting_user):
        raise NotAllowed(what, PLATFORM_OPERATORS)


@dataclass(frozen=True)
class Standing:
    """What a user is in one tenant: their membership (None: not a member) and whether they are a
    platform operator, who may open and change every tenant without belonging to it."""

    membership: Membership | None
    operator: bool

    @property
    def is_member(self) -> bool:
        """May open the tenant: a member, or a platform operator."""
        return self.operator or self.membership is not None

    @property
    def is_admin(self) -> bool:
        """May change the tenant: one of its admins, or a platform operator."""
        return self.operator or (self.membership is not None and self.membership.is_admin)


def standing(tenant: Tenant, user: AbstractBaseUser | AnonymousUser | None) -> Standing:
    """The one membership and tenant-admin rule (one query): every API permission, console gate,
    action check, connection list and agent run asks it.

    ``None`` is the shell operator; an anonymous user is nobody in any tenant.
    """
    if user is None:
        return Standing(membership=None, operator=True)
    membership = Membership.objects.for_tenant(tenant).filter(user_id=user.pk).first() if user.pk else None
    return Standing(membership=membership, operator=bool(getattr(user, "is_superuser", False)))


def is_tenant_member(tenant: Tenant, user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """``standing(tenant, user).is_member``: a member of ``tenant`` or a platform operator."""
    return standing(tenant, user).is_member


def is_tenant_admin(tenant: Tenant, user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """``standing(tenant, user).is_admin``: an admin of ``tenant`` or a platform operator."""
    return standing(tenant, user).is_admin


def require_tenant_admin(tenant: Tenant, acting_user: AbstractBaseUser | None) -> None:
    """Refuse changes to ``tenant`` to anyone but its admins and platform operators.

    The API checks this before it parses a body; the actions check it again so an edge that
    forgets (a new console view, an admin form) cannot skip it.

    Raises:
        NotAllowed: acting_user is not an admin of this tenant.
    """
    if not is_tenant_admin(tenant, acting_user):
        who = f"admins of '{tenant.slug}' and {PLATFORM_OPERATORS}"
        raise NotAllowed(f"changing tenant '{tenant.slug}'", who)


def token_holder(tenant: Tenant, username: str, *, acting_user: AbstractBaseUser | None) -> AbstractBaseUser:
    """The user a token for ``username`` in ``tenant`` would belong to, if acting_user may issue it.

    Platform operators issue tokens for members and for any platform superuser. Tenant admins
    issue them only for members who are not platform superusers: a superuser's token passes every
    permission check, so handing one out is a platform decision, not a tenant one. For tenant
    admins an unknown user and a non-member give the same error, so they cannot probe usernames.

    Raises:
        NotAllowed: a tenant admin asked for a platform superuser's token, or acting_user is no admin.
        NotAMember: the user is not a member (nor, for operators, a superuser).
        UserNotFound: operators only: no such user.
    """
    if is_platform_operator(acting_user):
        user = access_user(username)
        if not is_tenant_member(tenant, user):
            raise NotAMember(username, tenant.slug)
        return user
    require_tenant_admin(tenant, acting_user)
    user = access_membership(tenant, username).user
    if user.is_superuser:
        raise NotAllowed(f"issuing a token for platform superuser '{username}'", PLATFORM_OPERATORS)
    return user


def require_may_grant_superuser(acting_user: AbstractBaseUser | None) -> None:
    """Only platform operators make platform superusers; a tenant admin never can.

    Raises:
        NotAllowed: acting_user is not a platform operator.
    """
    require_platform_operator("making a platform superuser", acting_user)
