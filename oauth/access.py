"""An OAuth access token presented at a tenant's MCP endpoint, resolved to the caller it acts as."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from oauth.models import Connection
from tenants.callers import Caller, caller_for_grant
from tenants.exceptions import InvalidToken
from tenants.models import Tenant

MCP_SCOPE = "mcp"
# Only write last_used_at this often: a write per request would serialise hot paths on one row.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def caller_for_access_token(tenant: Tenant, raw: str) -> tuple[Caller, str | None]:
    """The caller an access token proves in ``tenant``, and its audience: the one resource it was
    issued for (RFC 8707), None if not exactly one. The gateway checks that audience is the MCP
    URL it was presented at (the SDK's ``BearerAuthBackend``, ``mcp_gateway/endpoint_auth.py``).

    Raises:
        InvalidToken: unknown, expired, without the mcp scope, its connection (in this tenant)
            revoked, or its user no longer an active member.
    """
    checksum = hashlib.sha256(raw.encode()).hexdigest()
    token = (
        get_access_token_model()
        .objects.select_related("user", "refresh_token")
        .filter(token_checksum=checksum)
        .first()
    )
    if token is None or token.user is None:
        raise InvalidToken("unknown")
    if token.is_expired():
        raise InvalidToken("expired")
    if MCP_SCOPE not in token.scope.split():
        raise InvalidToken("not an MCP token")
    refresh = getattr(token, "refresh_token", None)  # every token of a connection is issued with one
    if refresh is None:
        raise InvalidToken("no active connection")
    connection = (
        Connection.objects.for_tenant(tenant)
        .select_related("application")
        .filter(token_family=refresh.token_family, revoked_at__isnull=True)
        .first()
    )
    if connection is None or connection.user_id != token.user_id:
        raise InvalidToken("no active connection")
    _touch(connection)
    caller = caller_for_grant(
        tenant,
        token.user,
        grant_id=connection.pk,
        client_id=connection.application.client_id,
        read_only=connection.read_only,
    )
    audience = token.resource[0] if token.resource and len(token.resource) == 1 else None
    return caller, audience


def _touch(connection: Connection) -> None:
    now = timezone.now()
    if connection.last_used_at is None or now - connection.last_used_at > LAST_USED_RESOLUTION:
        Connection.all_tenants.filter(pk=connection.pk).update(last_used_at=now)
