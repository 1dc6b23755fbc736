"""Connections: list them for who may see them, revoke them (ending their tokens at once)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.models import get_refresh_token_model

from oauth.access import is_app_scope
from oauth.exceptions import ConnectionNotFound, NotNarrower
from oauth.models import Connection
from tenants.authority import is_tenant_admin
from tenants.models import Tenant, TenantAuditLog

REASON_USER = "revoked"
REASON_CLIENT = "revoked by the client"
REASON_REFRESH_REPLAY = "refresh token replayed"
REASON_CODE_REPLAY = "authorization code replayed"


def live_grant(tenant: Tenant, grant_id: int) -> tuple[AbstractBaseUser, bool, tuple[str, ...]] | None:
    """The user, read-only flag and app scopes of the tenant's connection ``grant_id``, None when it
    is revoked or gone (``tenants.callers.caller_now`` asks, registered in ``OAuthConfig.ready``)."""
    connection = (
        Connection.objects.for_tenant(tenant)
        .select_related("user")
        .filter(pk=grant_id, revoked_at__isnull=True)
        .first()
    )
    if connection is None or not connection.user.is_active:
        return None
    return connection.user, connection.read_only, tuple(connection.apps or ())


def visible_connections(tenant: Tenant, user: AbstractBaseUser) -> QuerySet[Connection]:
    """The tenant's connections ``user`` may see: all for tenant admins and superusers, else their own."""
    rows = Connection.objects.for_tenant(tenant).select_related("user", "application")
    return rows if is_tenant_admin(tenant, user) else rows.filter(user_id=user.pk)


def access_connection(tenant: Tenant, user: AbstractBaseUser, connection_id: int) -> Connection:
    """One connection of ``tenant`` that ``user`` may see.

    Raises:
        ConnectionNotFound: no such connection in the tenant, or not one ``user`` may see.
    """
    found = visible_connections(tenant, user).filter(pk=connection_id).first()
    if found is None:
        raise ConnectionNotFound(connection_id)
    return found


def revoke_connection(connection: Connection, *, acting_user: AbstractBaseUser | None, reason: str) -> None:
    """End a connection and every token of it at once; revoking twice is harmless.

    ``acting_user`` None is the platform itself (a replayed code or refresh token).
    """
    now = timezone.now()
    with transaction.atomic():
        ended = Connection.all_tenants.filter(pk=connection.pk, revoked_at__isnull=True).update(
            revoked_at=now, revoked_reason=reason
        )
        # Refresh tokens are marked revoked and their access tokens deleted, in a few statements.
        get_refresh_token_model().revoke_family(connection.token_family)
        if ended:
            connection.revoked_at, connection.revoked_reason = now, reason
            TenantAuditLog.objects.create(
                tenant_id=connection.tenant_id,
                acting_user=acting_user,
                action="oauth.connection.revoke",
                target=f"{connection.pk} {connection.application.client_id}"[:200],
                new_value={"reason": reason, "user": connection.user.get_username()},
            )


REASON_MEMBER_REMOVED = "member_removed"


def revoke_member_connections(
    sender, *, tenant: Tenant, user: AbstractBaseUser, acting_user, **kwargs
) -> None:
    """``tenants.signals.member_removed``: the removed member's connections end in that tenant, so a
    refresh token cannot bring them back, even once the user is a member again (a new consent is)."""
    live = Connection.objects.for_tenant(tenant).select_related("application", "user")
    for connection in live.filter(user=user, revoked_at__isnull=True):
        revoke_connection(connection, acting_user=acting_user, reason=REASON_MEMBER_REMOVED)


def narrow_connection(connection: Connection, scopes: list[str], *, acting_user: AbstractBaseUser) -> None:
    """Narrow a connection to the app ``scopes`` given (``app:<name>``, ``app:<name>:read``), each
    one it carries now: widening needs the person's consent again, on the consent page.

    Raises:
        NotNarrower: a scope that is no app scope, one the connection does not carry, or none at all.
    """
    kept = sorted(set(scopes))
    if not kept or not all(is_app_scope(scope) for scope in kept):
        raise NotNarrower("Keep at least one app scope (app:<name> or app:<name>:read), or revoke it.")
    now = set(connection.apps or ())
    if now:
        wider = [s for s in kept if s not in now and not (s.endswith(":read") and s[: -len(":read")] in now)]
        if wider:
            raise NotNarrower(f"{', '.join(wider)} would widen the connection: connect again to consent.")
    with transaction.atomic():
        Connection.objects.for_tenant(connection.tenant_id).filter(pk=connection.pk).update(apps=kept)
        TenantAuditLog.objects.create(
            tenant_id=connection.tenant_id,
            acting_user=acting_user,
            action="connection.narrow",
            target=f"{connection.client_id}:{connection.pk}",
            old_value={"apps": sorted(now)},
            new_value={"apps": kept},
        )
