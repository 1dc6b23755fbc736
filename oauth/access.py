"""An OAuth access token presented at a tenant's MCP endpoint, resolved to the caller it acts as."""

from __future__ import annotations

import functools
import hashlib
import re
import uuid

from django.contrib.auth import get_user_model
from oauth2_provider.models import get_access_token_model

from apps_runtime.models import App
from oauth.models import Connection
from tenants.callers import Caller, caller_for_grant
from tenants.exceptions import InvalidToken
from tenants.lookups import PreparedLookup, attnames, caller_user_fields, instance
from tenants.models import Tenant
from tenants.tokens import touch_last_used

MCP_SCOPE = "mcp"


def caller_for_access_token(tenant: Tenant, raw: str) -> tuple[Caller, str | None]:
    """The caller an access token proves in ``tenant``, and its audience: the one resource it was
    issued for (RFC 8707), None if not exactly one. The gateway checks that audience is the MCP
    URL it was presented at (the SDK's ``BearerAuthBackend``, ``mcp_gateway/transport/auth.py``).

    Raises:
        InvalidToken: unknown, expired, without the mcp scope, its connection (in this tenant)
            revoked, or its user no longer an active member.
    """
    checksum = hashlib.sha256(raw.encode()).hexdigest()
    row = _access_token_lookup().row(checksum)
    if row is None or row["user_id"] is None:
        raise InvalidToken("unknown")
    token = instance(get_access_token_model(), row)
    token.user = instance(get_user_model(), row, prefix="user__")
    if token.is_expired():
        raise InvalidToken("expired")
    if MCP_SCOPE not in token.scope.split():
        raise InvalidToken("not an MCP token")
    # Every token of a connection is issued with a refresh token, which names the connection.
    family = row["refresh_token__token_family"]
    found = _connection_lookup().row(tenant.pk, family) if family is not None else None
    if found is None or found["user_id"] != token.user_id:
        raise InvalidToken("no active connection")
    connection = instance(Connection, found)
    touch_last_used(connection)
    caller = caller_for_grant(
        tenant,
        token.user,
        grant_id=connection.pk,
        client_id=found["application__client_id"],
        read_only=connection.read_only,
        scopes=tuple(connection.apps or ()),
    )
    audience = token.resource[0] if token.resource and len(token.resource) == 1 else None
    return caller, audience


_APP_SCOPE = re.compile(r"^app:[a-z][a-z0-9_]{0,39}(:read)?$")


def is_app_scope(scope: str) -> bool:
    """``app:<name>`` or ``app:<name>:read``: a connection narrowed to that app (read-only)."""
    return _APP_SCOPE.fullmatch(scope) is not None


def app_scopes(tenant: Tenant) -> list[str]:
    """The app scopes of the tenant's deployed apps, as its protected-resource metadata lists them."""
    names = App.objects.for_tenant(tenant).filter(active_version__isnull=False).values_list("name", flat=True)
    return [scope for name in sorted(names) for scope in (f"app:{name}", f"app:{name}:read")]


@functools.cache
def _access_token_lookup() -> PreparedLookup:
    # Every request of an OAuth client asks: compiled once per thread, not per request (1.4 ms of
    # CPU as a queryset, issue 11).
    model = get_access_token_model()
    return PreparedLookup(
        lambda checksum: model.objects.filter(token_checksum=checksum),
        attnames(model)
        + [f"user__{name}" for name in caller_user_fields()]
        + ["refresh_token__token_family"],
    )


@functools.cache
def _connection_lookup() -> PreparedLookup:
    return PreparedLookup(
        lambda tenant_id, family: Connection.objects.for_tenant(tenant_id).filter(
            token_family=family, revoked_at__isnull=True
        ),
        attnames(Connection) + ["application__client_id"],
        key_types=(int, uuid.UUID),
    )
