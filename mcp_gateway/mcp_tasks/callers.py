"""Who a task's run acts as: its creator as of now, through the credential that created the task.

A run may start minutes after its ``tools/call`` (queued behind others, or after a restart). It acts
with the caller's rights at that moment, read afresh, and not at all once the credential is gone:
a revoked or expired token, a revoked OAuth connection, or a user no longer active.
"""

from __future__ import annotations

from dataclasses import replace

from oauth.models import Connection
from tenants.callers import Caller, caller_for
from tenants.models import ApiToken, Tenant

CREDENTIAL_GONE = (
    "The task did not run: the credential that created it was revoked or has expired, or its user "
    "is no longer active"
)


def caller_now(tenant: Tenant, created_by: Caller) -> Caller | None:
    """``created_by`` with their rights now; None when the credential no longer holds."""
    if created_by.token_id is not None:
        token = (
            ApiToken.objects.for_tenant(tenant).select_related("user").filter(pk=created_by.token_id).first()
        )
        if token is None or not token.is_active or not token.user.is_active:
            return None
        return caller_for(tenant, token.user, token)
    if created_by.oauth_grant_id is not None:
        connection = (
            Connection.objects.for_tenant(tenant)
            .select_related("user")
            .filter(pk=created_by.oauth_grant_id, revoked_at__isnull=True)
            .first()
        )
        if connection is None or not connection.user.is_active:
            return None
        caller = caller_for(tenant, connection.user)
        return replace(
            caller,
            read_only=connection.read_only,
            oauth_grant_id=connection.pk,
            oauth_client_id=created_by.oauth_client_id,
        )
    return None
