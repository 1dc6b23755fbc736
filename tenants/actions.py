"""State changes of tenants: each one atomic, audited, and the only way to make that change."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Field
from django.utils import timezone

from tenants.authority import (
    require_may_grant_superuser,
    require_platform_operator,
    require_tenant_admin,
    token_holder,
)
from tenants.exceptions import AlreadyTaken, InvalidValue
from tenants.models import PREFIX_RE, ROLE_RE, SLUG_RE, ApiToken, Membership, Tenant, TenantAuditLog
from tenants.scoping import access_membership
from tenants.signals import member_removed
from tenants.tenant_settings import SettingValue, clean_setting_value
from tenants.tokens import TOKEN_MAX_DAYS, hash_secret, new_secret

User = AbstractBaseUser
# A member holds a handful of roles; the bound keeps a request from storing a huge list that every
# permission check and catalog key then carries.
MAX_ROLES = 100


def _audit(
    tenant: Tenant,
    acting_user: User | None,
    action: str,
    target: str = "",
    old: object = None,
    new: object = None,
) -> None:
    TenantAuditLog.objects.create(
        tenant=tenant, acting_user=acting_user, action=action, target=target, old_value=old, new_value=new
    )


def record_audit(
    tenant: Tenant,
    action: str,
    target: str = "",
    *,
    acting_user: User | None,
    old: object = None,
    new: object = None,
) -> None:
    """One line of the tenant's audit log, for a change made outside this module (deploys)."""
    _audit(tenant, acting_user, action, target, old=old, new=new)


def bump_state_version(tenant: Tenant) -> None:
    """Mark the tenant's catalogs stale in every process (each notices on its next look)."""
    Tenant.objects.filter(pk=tenant.pk).update(state_version=F("state_version") + 1)


def clean_roles(roles: list[str]) -> list[str]:
    """Sorted, de-duplicated role names.

    Raises:
        InvalidValue: not a list, more than MAX_ROLES, or a role name breaks ^[a-z][a-z0-9_]{0,39}$.
    """
    if not isinstance(roles, list):
        raise InvalidValue("roles", type(roles).__name__, "must be a list of role names")
    if len(roles) > MAX_ROLES:
        raise InvalidValue("roles", f"{len(roles)} roles", f"at most {MAX_ROLES} roles")
    for role in roles:
        if not isinstance(role, str) or not re.fullmatch(ROLE_RE, role):
            raise InvalidValue("role", role, f"role names must match {ROLE_RE}")
    return sorted(set(roles))


def create_tenant(
    slug: str, *, name: str | None = None, prefix: str | None = None, acting_user: User | None
) -> Tenant:
    """Create a tenant; the MCP prefix defaults to the slug with '-' as '_'.

    The slug and the prefix are fixed from then on: wire names already handed to MCP clients
    and stored with each app's tools start with the prefix.

    Raises:
        NotAllowed: acting_user is not a platform operator.
        InvalidValue: the slug or prefix breaks its pattern.
        AlreadyTaken: the slug or prefix belongs to another tenant.
    """
    require_platform_operator("creating a tenant", acting_user)
    if not re.fullmatch(SLUG_RE, slug):
        raise InvalidValue("slug", slug, f"must match {SLUG_RE}")
    prefix = prefix if prefix is not None else slug.replace("-", "_")
    if not re.fullmatch(PREFIX_RE, prefix):
        raise InvalidValue("prefix", prefix, f"must match {PREFIX_RE}")
    if Tenant.objects.filter(slug=slug).exists():
        raise AlreadyTaken("slug", slug)
    if Tenant.objects.filter(mcp_prefix=prefix).exists():
        raise AlreadyTaken("prefix", prefix)
    try:
        with transaction.atomic():
            tenant = Tenant.objects.create(slug=slug, name=name or slug, mcp_prefix=prefix)
            _audit(tenant, acting_user, "tenant.create", slug, new={"name": tenant.name, "prefix": prefix})
    except IntegrityError as err:  # lost a race with another creator
        raise AlreadyTaken("slug or prefix", slug) from err
    return tenant


def rename_tenant(tenant: Tenant, name: str, *, acting_user: User | None) -> None:
    """Change the tenant's display name (its slug and prefix never change).

    Raises:
        NotAllowed: acting_user is not an admin of the tenant.
        InvalidValue: the name is empty or longer than 200 characters.
    """
    require_tenant_admin(tenant, acting_user)
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidValue("name", name, "1 to 200 characters")
    with transaction.atomic():
        old = Tenant.objects.select_for_update().values_list("name", flat=True).get(pk=tenant.pk)
        tenant.name = name
        if old == name:
            return
        Tenant.objects.filter(pk=tenant.pk).update(name=name)
        _audit(tenant, acting_user, "tenant.rename", tenant.slug, old=old, new=name)


def add_member(
    tenant: Tenant,
    username: str,
    *,
    roles: list[str] | None = None,
    admin: bool = False,
    superuser: bool = False,
    acting_user: User | None,
) -> Membership:
    """Add ``username`` (created when missing) to the tenant, or update their roles and flags.

    Raises:
        NotAllowed: acting_user is not an admin of the tenant, or asked for a superuser without
            being a platform operator.
        InvalidValue: a bad username or role name.
    """
    require_tenant_admin(tenant, acting_user)
    if superuser:
        require_may_grant_superuser(acting_user)
    roles = clean_roles(roles if roles is not None else [])
    user_model = get_user_model()
    validators = cast(Field, user_model._meta.get_field(user_model.USERNAME_FIELD)).validators
    if not isinstance(username, str) or not username or any(not _valid(v, username) for v in validators):
        raise InvalidValue("username", username, "letters, digits and @/./+/-/_ only")
    with transaction.atomic():
        user, _ = get_user_model().objects.get_or_create(username=username)
        if superuser and not user.is_superuser:
            user.is_superuser = user.is_staff = True
            user.save(update_fields=["is_superuser", "is_staff"])
        membership = Membership.objects.for_tenant(tenant).filter(user=user).first()
        if membership is None:
            membership = Membership.objects.create(tenant=tenant, user=user, roles=roles, is_admin=admin)
            _audit(tenant, acting_user, "member.set", username, new={"roles": roles, "admin": admin})
            bump_state_version(tenant)
        else:
            _change_membership(tenant, membership, roles, admin, acting_user=acting_user)
    return membership


def update_member(
    tenant: Tenant,
    username: str,
    *,
    roles: list[str] | None = None,
    admin: bool | None = None,
    acting_user: User | None,
) -> Membership:
    """Change an existing member's roles and/or admin flag; None leaves that one as it is.

    Raises:
        NotAllowed: acting_user is not an admin of the tenant.
        NotAMember: the user is not a member.
        InvalidValue: a bad role name.
    """
    require_tenant_admin(tenant, acting_user)
    cleaned = clean_roles(roles) if roles is not None else None
    with transaction.atomic():
        membership = access_membership(tenant, username)
        _change_membership(
            tenant,
            membership,
            cleaned if cleaned is not None else membership.roles,
            admin if admin is not None else membership.is_admin,
            acting_user=acting_user,
        )
    return membership


def _change_membership(
    tenant: Tenant, membership: Membership, roles: list[str], admin: bool, *, acting_user: User | None
) -> None:
    """Store new roles and flag on the locked row; audit and bump the state when they differ."""
    locked = Membership.objects.for_tenant(tenant).select_for_update().get(pk=membership.pk)
    old, new = {"roles": locked.roles, "admin": locked.is_admin}, {"roles": roles, "admin": admin}
    membership.roles, membership.is_admin = roles, admin
    if old == new:
        return
    membership.save(update_fields=["roles", "is_admin"])
    _audit(tenant, acting_user, "member.set", membership.user.get_username(), old=old, new=new)
    bump_state_version(tenant)


def _valid(validator: Callable[[str], object], value: str) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


def remove_member(tenant: Tenant, username: str, *, acting_user: User | None) -> None:
    """Remove a member and revoke their tokens (and, through ``member_removed``, their OAuth
    connections) in this tenant.

    Raises:
        NotAllowed: acting_user is not an admin of the tenant.
        NotAMember: the user is not a member.
    """
    require_tenant_admin(tenant, acting_user)
    with transaction.atomic():
        membership = access_membership(tenant, username)
        ApiToken.objects.for_tenant(tenant).filter(user=membership.user, revoked_at=None).update(
            revoked_at=timezone.now()
        )
        membership.delete()
        member_removed.send(sender=Membership, tenant=tenant, user=membership.user, acting_user=acting_user)
        _audit(tenant, acting_user, "member.remove", username, old={"roles": membership.roles})
        bump_state_version(tenant)


def issue_token(
    tenant: Tenant,
    username: str,
    *,
    name: str = "",
    read_only: bool = False,
    expires_days: int | None = None,
    apps: list[str] | None = None,
    acting_user: User | None,
) -> tuple[ApiToken, str]:
    """Issue a token for a member (or a platform superuser); returns the row and the raw token.

    The raw token is returned once and never stored. Who may issue it for whom is
    ``authority.token_holder``'s rule.

    Raises:
        NotAllowed: a tenant admin asked for a platform superuser's token, or acting_user is no admin.
        UserNotFound: no such user (platform operators only; others get NotAMember).
        NotAMember: the user is neither a member nor a superuser.
        InvalidValue: expires_days is not a whole number from 1 to TOKEN_MAX_DAYS; apps holds a
            name that is no app name, or more than TOKEN_MAX_APPS.
    """
    expires_at = _token_expiry(expires_days)
    apps = token_apps(apps)
    user = token_holder(tenant, username, acting_user=acting_user)
    secret = new_secret()
    with transaction.atomic():
        token = ApiToken.objects.create(
            tenant=tenant,
            user=user,
            name=name,
            key_id=secret.key_id,
            secret_hash=hash_secret(secret.secret),
            read_only=read_only,
            apps=apps,
            expires_at=expires_at,
        )
        new = {"read_only": read_only, "apps": apps}
        _audit(tenant, acting_user, "token.issue", f"{username}:{token.key_id}", new=new)
    return token, secret.token


TOKEN_MAX_APPS = 50
_APP_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")  # apps_runtime.manifest.schema.APP_NAME_PATTERN


def token_apps(apps: list[str] | None) -> list[str]:
    """The apps a token is narrowed to, checked and sorted (empty: not narrowed). An app that does
    not exist (yet) is carried by name: deploying it later gives the token its tools.

    Raises:
        InvalidValue: a name that is no app name, or more than TOKEN_MAX_APPS names.
    """
    names = sorted(set(apps or ()))
    if len(names) > TOKEN_MAX_APPS:
        raise InvalidValue("apps", len(names), f"at most {TOKEN_MAX_APPS} apps")
    for name in names:
        if not isinstance(name, str) or not _APP_NAME.fullmatch(name):
            raise InvalidValue("apps", name, "an app name: lowercase letters, digits and underscores")
    return names


def _token_expiry(expires_days: int | None) -> datetime | None:
    """When a token issued now for ``expires_days`` expires; None for never.

    Raises:
        InvalidValue: not a whole number from 1 to TOKEN_MAX_DAYS.
    """
    if expires_days is None:
        return None
    whole = isinstance(expires_days, int) and not isinstance(expires_days, bool)
    if not whole or not 1 <= expires_days <= TOKEN_MAX_DAYS:
        raise InvalidValue("expires-days", expires_days, f"must be a whole number from 1 to {TOKEN_MAX_DAYS}")
    return timezone.now() + timedelta(days=expires_days)


def revoke_token(token: ApiToken, *, acting_user: User | None) -> None:
    """Revoke a token at once; revoking twice is harmless.

    Raises:
        NotAllowed: acting_user is not an admin of the token's tenant.
    """
    require_tenant_admin(token.tenant, acting_user)
    if token.revoked_at is not None:
        return
    with transaction.atomic():
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        _audit(token.tenant, acting_user, "token.revoke", token.key_id)


def set_tenant_setting(tenant: Tenant, key: str, value: object, *, acting_user: User | None) -> SettingValue:
    """Set one tenant setting; returns the stored value.

    Raises:
        NotAllowed: acting_user is not an admin of the tenant.
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the value breaks the setting's rule (see ``tenant_settings``).
    """
    require_tenant_admin(tenant, acting_user)
    cleaned = clean_setting_value(key, value)
    with transaction.atomic():
        locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
        old = locked.get_settings()[key]
        locked.settings = {**locked.settings, key: cleaned}
        locked.save(update_fields=["settings"])
        tenant.settings = locked.settings
        _audit(tenant, acting_user, "setting.set", key, old=old, new=cleaned)
        if old != cleaned:
            bump_state_version(tenant)
    return cleaned
