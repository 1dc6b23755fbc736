"""Members' own accounts at the operator's OAuth providers (``OUTBOUND_OAUTH_PROVIDERS``): connecting
one (authorization code + PKCE), the token a call of theirs carries (refreshed before it expires),
revoking it. Only ever the caller's own: a service principal (jobs, service agents) has none.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

import httpx2
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from apps_runtime.models import OutboundConnection
from core import sealing
from tenants.models import Tenant

_SALT = b"lowcode-platform outbound connections v1\x00"
REFRESH_MARGIN = timedelta(seconds=60)  # a token this close to its expiry is refreshed first
PROVIDER_TIMEOUT = 10.0


class ConnectionFailed(Exception):
    """The provider refused or did not answer a token request."""


@dataclass(frozen=True)
class Provider:
    name: str
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]


def provider(name: str) -> Provider | None:
    config = (settings.OUTBOUND_OAUTH_PROVIDERS or {}).get(name)
    if not isinstance(config, dict):
        return None
    return Provider(
        name=name,
        authorize_url=str(config.get("authorize_url", "")),
        token_url=str(config.get("token_url", "")),
        client_id=str(config.get("client_id", "")),
        client_secret=str(config.get("client_secret", "")),
        scopes=tuple(str(s) for s in config.get("scopes") or ()),
    )


def accounts_url(slug: str) -> str:
    """Where a member connects their accounts (the console's Connected accounts page)."""
    return f"{settings.PUBLIC_BASE_URL}{reverse('console:accounts', kwargs={'slug': slug})}"


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def begin(prov: Provider, redirect_uri: str, scopes: list[str] | None = None) -> tuple[str, str, str]:
    """The provider's authorization URL, with the ``state`` and PKCE ``verifier`` to keep until its answer."""
    state, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
    query = {
        "response_type": "code",
        "client_id": prov.client_id,
        "redirect_uri": redirect_uri,
        "scope": " ".join(scopes or prov.scopes),
        "state": state,
        "code_challenge": _challenge(verifier),
        "code_challenge_method": "S256",
    }
    separator = "&" if "?" in prov.authorize_url else "?"
    return f"{prov.authorize_url}{separator}{urlencode(query)}", state, verifier


def _token_request(prov: Provider, form: dict) -> dict:
    form = {**form, "client_id": prov.client_id}
    if prov.client_secret:
        form["client_secret"] = prov.client_secret
    try:
        response = httpx2.post(prov.token_url, data=form, timeout=PROVIDER_TIMEOUT, follow_redirects=False)
        body = response.json()
    except (httpx2.HTTPError, ValueError) as err:
        raise ConnectionFailed(f"the {prov.name} token endpoint did not answer") from err
    if response.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
        raise ConnectionFailed(f"the {prov.name} token endpoint refused ({response.status_code})")
    return body


def _store(
    tenant_id: int, user_id: int, prov: Provider, tokens: dict, refresh: str = ""
) -> OutboundConnection:
    expires_in = tokens.get("expires_in")
    expires_at = timezone.now() + timedelta(seconds=int(expires_in)) if isinstance(expires_in, int) else None
    refresh = str(tokens.get("refresh_token") or refresh)
    scope = tokens.get("scope")
    row, _ = OutboundConnection.all_tenants.update_or_create(
        tenant_id=tenant_id,
        user_id=user_id,
        provider=prov.name,
        defaults={
            "access_sealed": sealing.seal(_SALT, str(tokens["access_token"])),
            "refresh_sealed": sealing.seal(_SALT, refresh) if refresh else "",
            "expires_at": expires_at,
            "scopes": scope.split() if isinstance(scope, str) else list(prov.scopes),
            "updated_at": timezone.now(),
        },
    )
    return row


def finish(tenant: Tenant, user_id: int, prov: Provider, code: str, verifier: str, redirect_uri: str) -> None:
    """Trade the provider's code for the member's tokens and keep them sealed.

    Raises:
        ConnectionFailed: the provider refused.
    """
    tokens = _token_request(
        prov,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        },
    )
    _store(tenant.pk, user_id, prov, tokens)


def token_for(tenant_id: int, user_id: int, prov: Provider) -> str | None:
    """The member's access token for ``prov`` (refreshed when close to expiry), or None: not connected,
    or the refresh was refused (they connect again).
    """
    row = OutboundConnection.all_tenants.filter(
        tenant_id=tenant_id, user_id=user_id, provider=prov.name
    ).first()
    if row is None:
        return None
    try:
        if row.expires_at is not None and row.expires_at - REFRESH_MARGIN <= timezone.now():
            if not row.refresh_sealed:
                return None
            refresh = sealing.open_value(_SALT, row.refresh_sealed)
            row = _store(
                tenant_id,
                user_id,
                prov,
                _token_request(prov, {"grant_type": "refresh_token", "refresh_token": refresh}),
                refresh,
            )
        return sealing.open_value(_SALT, row.access_sealed)
    except (sealing.InvalidToken, ConnectionFailed):
        return None


def revoke(tenant: Tenant, connection_id: int, *, acting_user_id: int, is_admin: bool) -> bool:
    """Forget a connection: the member's own, or any of the tenant's for a tenant admin."""
    rows = OutboundConnection.objects.for_tenant(tenant).filter(pk=connection_id)
    if not is_admin:
        rows = rows.filter(user_id=acting_user_id)
    deleted, _ = rows.delete()
    return bool(deleted)
