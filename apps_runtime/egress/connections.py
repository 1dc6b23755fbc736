"""Accounts at the operator's OAuth providers (``OUTBOUND_OAUTH_PROVIDERS``): connecting one
(authorization code + PKCE), the token a call carries (refreshed before it expires), revoking it.

A member's call carries only that member's own account; a service principal's (a job's, an agent's
running as ``service``) only the tenant's service account for the provider, which a tenant admin
connected explicitly. Neither ever falls back to the other (``token_for``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

import httpx2
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from apps_runtime.models import App, OutboundConnection
from core import sealing
from tenants.authority import is_tenant_admin
from tenants.callers import Caller
from tenants.models import Tenant

_SALT = b"lowcode-platform outbound connections v1\x00"
_STATE_SALT = b"lowcode-platform outbound service account state v1\x00"
SERVICE_STATE_PREFIX = "svc."  # a service account's ``state``: sealed, so no session has to hold it
SERVICE_STATE_TTL_S = 600  # an admin finishes signing in at the provider within this
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


def accounts_url(slug: str, origin: str | None = None) -> str:
    """Where a member connects their accounts (the console's Connected accounts page), under
    ``origin`` (a request's public origin) or else PUBLIC_BASE_URL."""
    return f"{origin or settings.PUBLIC_BASE_URL}{reverse('console:accounts', kwargs={'slug': slug})}"


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def declared_providers(tenant: Tenant) -> dict[str, list[str]]:
    """Provider name -> the apps whose active version declares a connection to it."""
    found: dict[str, list[str]] = {}
    apps = App.objects.for_tenant(tenant).filter(active_version__isnull=False)
    for app in apps.select_related("active_version").defer("active_version__bundle").order_by("name"):
        for spec in (app.active_version.manifest.get("connections") or {}).values():
            found.setdefault(spec.get("provider", ""), []).append(app.name)
    return found


def begin(prov: Provider, redirect_uri: str, scopes: list[str] | None = None) -> tuple[str, str, str]:
    """The provider's authorization URL, with the ``state`` and PKCE ``verifier`` to keep until its answer."""
    state, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
    return _authorize_url(prov, redirect_uri, state, verifier, scopes), state, verifier


def _authorize_url(
    prov: Provider, redirect_uri: str, state: str, verifier: str, scopes: list[str] | None = None
) -> str:
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
    return f"{prov.authorize_url}{separator}{urlencode(query)}"


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
    tenant_id: int,
    user_id: int | None,
    prov: Provider,
    tokens: dict,
    refresh: str = "",
    *,
    connected_by: int | None = None,
) -> OutboundConnection:
    """Keep ``tokens`` sealed: ``user_id`` None is the tenant's service account. ``connected_by`` (a
    new connection, not a refresh) records who connected it, and when."""
    expires_in = tokens.get("expires_in")
    expires_at = timezone.now() + timedelta(seconds=int(expires_in)) if isinstance(expires_in, int) else None
    refresh = str(tokens.get("refresh_token") or refresh)
    scope = tokens.get("scope")
    now = timezone.now()
    values = {
        "access_sealed": sealing.seal(_SALT, str(tokens["access_token"])),
        "refresh_sealed": sealing.seal(_SALT, refresh) if refresh else "",
        "expires_at": expires_at,
        "scopes": scope.split() if isinstance(scope, str) else list(prov.scopes),
        "updated_at": now,
    }
    if connected_by is not None:
        values.update(connected_by_id=connected_by, connected_at=now)
    row, _ = OutboundConnection.all_tenants.update_or_create(
        tenant_id=tenant_id, user_id=user_id, provider=prov.name, defaults=values
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
    _store(tenant.pk, user_id, prov, tokens, connected_by=user_id)


def token_for(caller: Caller, prov: Provider) -> tuple[str, str | None]:
    """Whose account a call of ``caller`` carries (``"member"`` or ``"service"``) and its access token
    for ``prov`` (refreshed when close to expiry), or None: not connected, or the refresh was refused
    (connect again). The one rule of whose credentials a call runs with: a member's call only their
    own account, a service principal's only the tenant's service account, anyone else's nothing.
    """
    if caller.user_id is not None:
        return "member", _token(caller.tenant_id, caller.user_id, prov)
    if caller.is_service:
        return "service", _token(caller.tenant_id, None, prov)
    return "", None


def _token(tenant_id: int, user_id: int | None, prov: Provider) -> str | None:
    rows = OutboundConnection.all_tenants.filter(tenant_id=tenant_id, provider=prov.name)
    row = (rows.filter(user__isnull=True) if user_id is None else rows.filter(user_id=user_id)).first()
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


def connected(tenant_id: int, user_id: int, provider_name: str) -> bool:
    """Whether the member has an account connected at the provider (whether its token still works is
    the next request's to find out)."""
    return OutboundConnection.all_tenants.filter(
        tenant_id=tenant_id, user_id=user_id, provider=provider_name
    ).exists()


def revoke(tenant: Tenant, connection_id: int, *, acting_user_id: int, is_admin: bool) -> bool:
    """Forget a connection: the member's own, or any of the tenant's (the service accounts too) for a
    tenant admin."""
    rows = OutboundConnection.objects.for_tenant(tenant).filter(pk=connection_id)
    if not is_admin:
        rows = rows.filter(user_id=acting_user_id)
    deleted, _ = rows.delete()
    return bool(deleted)


def service_accounts(tenant: Tenant) -> list[dict]:
    """Each provider the tenant's apps declare, or that has a service account, with that account (who
    connected it, when) or None; never a token."""
    declared = declared_providers(tenant)
    rows = {
        row.provider: row
        for row in OutboundConnection.objects.for_tenant(tenant)
        .filter(user__isnull=True)
        .select_related("connected_by")
    }
    return [
        {
            "provider": name,
            "apps": declared.get(name, []),
            "configured": provider(name) is not None,
            "account": rows.get(name),
        }
        for name in sorted(set(declared) | set(rows))
    ]


def begin_service(tenant: Tenant, prov: Provider, admin_id: int, redirect_uri: str) -> str:
    """The provider's authorization URL connecting ``prov``'s service account of ``tenant``: its
    ``state`` seals the PKCE verifier and who asked, so the callback needs no session of the API call
    that began it, and takes it only from that same admin, signed in (``finish_service``)."""
    verifier = secrets.token_urlsafe(48)
    pending = {"t": tenant.pk, "p": prov.name, "u": admin_id, "v": verifier, "r": redirect_uri}
    state = SERVICE_STATE_PREFIX + sealing.seal(_STATE_SALT, json.dumps(pending))
    return _authorize_url(prov, redirect_uri, state, verifier)


def finish_service(tenant: Tenant, user, state: str, code: str) -> Provider:
    """Trade the provider's code for the tenant's service account tokens and keep them sealed.

    Raises:
        ConnectionFailed: the state is not one this admin began here lately, they are no longer a
            tenant admin, or the provider refused.
    """
    try:
        sealed = state.removeprefix(SERVICE_STATE_PREFIX).encode("ascii")
        pending = json.loads(sealing.fernet(_STATE_SALT).decrypt(sealed, ttl=SERVICE_STATE_TTL_S))
    except (sealing.InvalidToken, UnicodeError, ValueError) as err:
        raise ConnectionFailed("that sign-in answer is stale or was not started here") from err
    if pending.get("t") != tenant.pk or pending.get("u") != user.pk or not is_tenant_admin(tenant, user):
        raise ConnectionFailed("only the tenant admin who started connecting a service account finishes it")
    prov = provider(str(pending.get("p")))
    if prov is None:
        raise ConnectionFailed(f"provider {pending.get('p')!r} is not configured on this platform")
    tokens = _token_request(
        prov,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": pending["r"],
            "code_verifier": pending["v"],
        },
    )
    _store(tenant.pk, None, prov, tokens, connected_by=user.pk)
    return prov


def revoke_service(tenant: Tenant, provider_name: str) -> bool:
    """Forget the tenant's service account at ``provider_name`` (tenant admins decide, at the edge)."""
    rows = OutboundConnection.objects.for_tenant(tenant).filter(user__isnull=True, provider=provider_name)
    deleted, _ = rows.delete()
    return bool(deleted)
