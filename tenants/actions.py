"""State changes of tenants: each one atomic, audited, and the only way to make that change."""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from tenants.exceptions import AlreadyTaken, InvalidValue, NotAMember
from tenants.models import PREFIX_RE, ROLE_RE, SLUG_RE, ApiToken, Membership, Tenant, TenantAuditLog
from tenants.scoping import access_membership, access_user
from tenants.signals import tenant_changed
from tenants.tenant_settings import clean_setting_value
from tenants.tokens import hash_secret, new_secret

User = AbstractBaseUser


def _audit(
    tenant: Tenant, acting_user: User | None, action: str, target: str = "", old=None, new=None
) -> None:
    TenantAuditLog.objects.create(
        tenant=tenant, acting_user=acting_user, action=action, target=target, old_value=old, new_value=new
    )


def bump_state_version(tenant: Tenant) -> None:
    """Mark the tenant's catalogs stale in every process and tell listeners once committed."""
    Tenant.objects.filter(pk=tenant.pk).update(state_version=F("state_version") + 1)
    tenant_id = tenant.pk
    transaction.on_commit(lambda: tenant_changed.send(sender=Tenant, tenant_id=tenant_id))


def clean_roles(roles: list[str]) -> list[str]:
    """Sorted, de-duplicated role names.

    Raises:
        InvalidValue: a role name breaks ^[a-z][a-z0-9_]{0,39}$.
    """
    for role in roles:
        if not isinstance(role, str) or not re.fullmatch(ROLE_RE, role):
            raise InvalidValue("role", role, f"role names must match {ROLE_RE}")
    return sorted(set(roles))


def create_tenant(
    slug: str, *, name: str | None = None, prefix: str | None = None, acting_user: User | None
) -> Tenant:
    """Create a tenant; the MCP prefix defaults to the slug with '-' as '_'.

    Raises:
        InvalidValue: the slug or prefix breaks its pattern.
        AlreadyTaken: the slug or prefix belongs to another tenant.
    """
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
        InvalidValue: a bad username or role name.
    """
    roles = clean_roles(roles or [])
    user_model = get_user_model()
    validators = user_model._meta.get_field(user_model.USERNAME_FIELD).validators
    if not username or any(not _valid(v, username) for v in validators):
        raise InvalidValue("username", username, "letters, digits and @/./+/-/_ only")
    with transaction.atomic():
        user, _ = get_user_model().objects.get_or_create(username=username)
        if superuser and not user.is_superuser:
            user.is_superuser = user.is_staff = True
            user.save(update_fields=["is_superuser", "is_staff"])
        membership = Membership.objects.for_tenant(tenant).filter(user=user).first()
        old = {"roles": membership.roles, "admin": membership.is_admin} if membership else None
        if membership is None:
            membership = Membership.objects.create(tenant=tenant, user=user, roles=roles, is_admin=admin)
        else:
            membership.roles, membership.is_admin = roles, admin
            membership.save(update_fields=["roles", "is_admin"])
        _audit(tenant, acting_user, "member.set", username, old=old, new={"roles": roles, "admin": admin})
        bump_state_version(tenant)
    return membership


def _valid(validator, value: str) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


def remove_member(tenant: Tenant, username: str, *, acting_user: User | None) -> None:
    """Remove a member and revoke their tokens in this tenant.

    Raises:
        NotAMember: the user is not a member.
    """
    with transaction.atomic():
        membership = access_membership(tenant, username)
        ApiToken.objects.for_tenant(tenant).filter(user=membership.user, revoked_at=None).update(
            revoked_at=timezone.now()
        )
        membership.delete()
        _audit(tenant, acting_user, "member.remove", username, old={"roles": membership.roles})
        bump_state_version(tenant)


def issue_token(
    tenant: Tenant,
    username: str,
    *,
    name: str = "",
    read_only: bool = False,
    expires_days: int | None = None,
    acting_user: User | None,
) -> tuple[ApiToken, str]:
    """Issue a token for a member (or a platform superuser); returns the row and the raw token.

    The raw token is returned once and never stored.

    Raises:
        UserNotFound: no such user.
        NotAMember: the user is neither a member nor a superuser.
        InvalidValue: expires_days is not positive.
    """
    user = access_user(username)
    is_member = Membership.objects.for_tenant(tenant).filter(user=user).exists()
    if not is_member and not user.is_superuser:
        raise NotAMember(username, tenant.slug)
    if expires_days is not None and expires_days <= 0:
        raise InvalidValue("expires-days", expires_days, "must be a positive number of days")
    secret = new_secret()
    expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
    with transaction.atomic():
        token = ApiToken.objects.create(
            tenant=tenant,
            user=user,
            name=name,
            key_id=secret.key_id,
            secret_hash=hash_secret(secret.secret),
            read_only=read_only,
            expires_at=expires_at,
        )
        _audit(tenant, acting_user, "token.issue", f"{username}:{token.key_id}", new={"read_only": read_only})
    return token, secret.token


def revoke_token(token: ApiToken, *, acting_user: User | None) -> None:
    """Revoke a token at once; revoking twice is harmless."""
    if token.revoked_at is not None:
        return
    with transaction.atomic():
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        _audit(token.tenant, acting_user, "token.revoke", token.key_id)


def set_tenant_setting(tenant: Tenant, key: str, value: object, *, acting_user: User | None) -> bool:
    """Set one tenant setting; returns the stored value.

    Raises:
        UnknownSetting: the key is not a tenant setting.
        InvalidValue: the value is not a boolean.
    """
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
