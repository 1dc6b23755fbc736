"""The toolkit's request validator, with the platform's rules for codes, connections and refresh.

- A code carries the tenant and the read-only choice from the consent page (``lcp_tenant`` and
  ``lcp_read_only`` in the credentials the consent view passes).
- Exchanging a code opens a connection that owns the new refresh-token family. The code is kept,
  claimed by that connection, until it expires: presenting it again is a replay, which revokes the
  connection (RFC 6749 §4.1.2: tokens issued from a reused code SHOULD be revoked).
- Refresh needs the connection still active; a replayed rotated refresh token makes the toolkit
  revoke the family, and the connection ends with it.
- Revoking a token at the revocation endpoint (RFC 7009) ends its connection.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749 import errors

from oauth.access import MCP_SCOPE, is_app_scope
from oauth.connections import REASON_CLIENT, REASON_CODE_REPLAY, REASON_REFRESH_REPLAY, revoke_connection
from oauth.models import AuthorizationCode, Connection


def _checksum(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _connections_of_families(families: set) -> list[Connection]:
    if not families:
        return []
    return list(
        Connection.all_tenants.select_related("application", "user").filter(token_family__in=families)
    )


class PlatformValidator(OAuth2Validator):
    def _create_authorization_code(self, request, code, expires=None):
        # The toolkit's version, with the tenant and read-only choice, and S256 as the only method.
        tenant = getattr(request, "lcp_tenant", None)
        if tenant is None:  # only the consent view issues codes, and it always names the tenant
            raise errors.InvalidRequestError(description="no tenant for this authorization", request=request)
        if request.code_challenge_method != "S256":
            raise errors.InvalidRequestError(
                description='code_challenge_method must be "S256"', request=request
            )
        seconds = oauth2_settings.AUTHORIZATION_CODE_EXPIRE_SECONDS
        return AuthorizationCode.objects.create(
            application=request.client,
            user=request.user,
            code=code["code"],
            expires=expires or timezone.now() + timedelta(seconds=seconds),
            redirect_uri=request.redirect_uri,
            scope=" ".join([MCP_SCOPE, *(getattr(request, "lcp_apps", None) or [])]),
            code_challenge=request.code_challenge or "",
            code_challenge_method=request.code_challenge_method,
            resource=getattr(request, "resource", []),
            tenant=tenant,
            read_only=bool(getattr(request, "lcp_read_only", False)),
            apps=list(getattr(request, "lcp_apps", None) or []),
        )

    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        """``mcp`` and app scopes (``app:<name>``, ``app:<name>:read``): which apps a connection
        carries is chosen on the consent page, which a client's requested app scopes preselect."""
        return all(scope == MCP_SCOPE or is_app_scope(scope) for scope in scopes)

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        grant = (
            AuthorizationCode.objects.select_related("connection__application", "connection__user")
            .filter(code=code, application=client)
            .first()
        )
        if grant is not None and grant.connection_id is not None:
            revoke_connection(grant.connection, acting_user=None, reason=REASON_CODE_REPLAY)
            return False
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            return False
        request.lcp_grant = grant
        return True

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        """Nothing to do: the code was claimed by its connection when its tokens were saved."""

    def _save_bearer_token(self, token, request, *args, **kwargs):
        super()._save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "authorization_code":
            self._open_connection(token, request)

    def _open_connection(self, token: dict, request) -> Connection:
        """Open the code's connection over the refresh-token family just issued; claim the code.

        Runs in the toolkit's token transaction: a second exchange of the same code that raced
        the first finds the code claimed, and its tokens roll back with the error.
        """
        grant: AuthorizationCode = request.lcp_grant
        refresh = get_refresh_token_model().objects.get(
            token_checksum=_checksum(token["refresh_token"]), revoked__isnull=True
        )
        connection = Connection.objects.create(
            tenant_id=grant.tenant_id,
            user_id=grant.user_id,
            application=request.client,
            read_only=grant.read_only,
            apps=grant.apps,
            token_family=refresh.token_family,
        )
        claimed = AuthorizationCode.objects.filter(pk=grant.pk, connection__isnull=True).update(
            connection=connection
        )
        if not claimed:
            raise errors.InvalidGrantError(request=request)
        return connection

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        if not valid:
            replayed = (
                get_refresh_token_model()
                .objects.filter(token_checksum=_checksum(refresh_token), revoked__isnull=False)
                .values_list("token_family", flat=True)
            )
            for connection in _connections_of_families(set(replayed)):
                revoke_connection(connection, acting_user=None, reason=REASON_REFRESH_REPLAY)
            return False
        family = request.refresh_token_instance.token_family
        connection = Connection.all_tenants.filter(token_family=family, revoked_at__isnull=True).first()
        return connection is not None and connection.user_id == request.refresh_token_instance.user_id

    def revoke_token(self, token, token_type_hint, request, *args, **kwargs):
        application_pk = getattr(request.client, "pk", None)
        refresh_model = get_refresh_token_model()
        checksum = _checksum(token)
        families = set(
            refresh_model.objects.filter(application_id=application_pk, token_checksum=checksum).values_list(
                "token_family", flat=True
            )
        ) | set(
            refresh_model.objects.filter(
                application_id=application_pk, access_token__token_checksum=checksum
            ).values_list("token_family", flat=True)
        )
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
        for connection in _connections_of_families(families):
            revoke_connection(connection, acting_user=connection.user, reason=REASON_CLIENT)
