"""What a client may register, by dynamic registration (RFC 7591) or a metadata document.

Authorization code with PKCE is the only flow, so a client asks for ``authorization_code`` (and
``refresh_token``) and the ``code`` response type. Its redirect URIs are https, or http on a
loopback address (a native app's local listener, RFC 8252 §7.3): nothing else can receive a code
without it crossing the network in clear.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import get_application_model

from oauth.exceptions import OAuthError, RedirectUriRefused
from oauth.models import Connection

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
GRANT_TYPES = {"authorization_code", "refresh_token"}
RESPONSE_TYPES = {"code"}
AUTH_METHODS = {"none", "client_secret_basic", "client_secret_post"}


class RegistrationRefused(OAuthError):
    """Client metadata outside what this server supports; names the field."""

    code = "invalid_client_metadata"

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


def check_redirect_uri(uri: object) -> None:
    """Raises: RedirectUriRefused: not https, nor http on a loopback address; has a fragment; too long."""
    if not isinstance(uri, str):
        raise RedirectUriRefused(str(uri)[:100], "must be a string")
    limit = settings.OAUTH_REDIRECT_URI_MAX_LENGTH
    if len(uri) > limit:
        raise RedirectUriRefused(uri[:100] + "...", f"is {len(uri)} characters, over the {limit} allowed")
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        raise RedirectUriRefused(uri, "must not have a fragment")
    if parts.username or parts.password:
        raise RedirectUriRefused(uri, "must not carry credentials")
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return
    raise RedirectUriRefused(uri, "use https, or http on a loopback address (127.0.0.1, [::1], localhost)")


def _string_list(metadata: dict, field: str, default: list[str]) -> list[str]:
    value = metadata.get(field, default)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RegistrationRefused(field, "must be an array of strings")
    return value


def check_client_metadata(metadata: dict, *, default_auth_method: str) -> None:
    """Check registration metadata against this server's policy.

    Raises:
        RegistrationRefused: a grant type, response type or auth method this server does not use.
        RedirectUriRefused: a redirect URI outside the policy.
    """
    grant_types = _string_list(metadata, "grant_types", ["authorization_code"])
    if "authorization_code" not in grant_types or not set(grant_types) <= GRANT_TYPES:
        raise RegistrationRefused("grant_types", "only authorization_code (with refresh_token) is supported")
    if not set(_string_list(metadata, "response_types", ["code"])) <= RESPONSE_TYPES:
        raise RegistrationRefused("response_types", 'only "code" is supported')
    method = metadata.get("token_endpoint_auth_method", default_auth_method)
    if method not in AUTH_METHODS:
        raise RegistrationRefused(
            "token_endpoint_auth_method", f"use one of {', '.join(sorted(AUTH_METHODS))}"
        )
    redirect_uris = _string_list(metadata, "redirect_uris", [])
    if not redirect_uris:
        raise RegistrationRefused("redirect_uris", "at least one is required")
    if len(redirect_uris) > settings.OAUTH_CLIENT_MAX_REDIRECT_URIS:
        raise RegistrationRefused(
            "redirect_uris", f"{len(redirect_uris)} given, at most {settings.OAUTH_CLIENT_MAX_REDIRECT_URIS}"
        )
    for uri in redirect_uris:
        check_redirect_uri(uri)
    _check_application_type(metadata.get("application_type", None), redirect_uris)


APPLICATION_TYPES = ("web", "native")


def _check_application_type(application_type: object, redirect_uris: list[str]) -> None:
    """``application_type`` (2026-07-28 clients send it; older ones may not): a web application
    receives codes on https only, a native one may also listen on loopback http (RFC 8252)."""
    if application_type is None:
        return
    if application_type not in APPLICATION_TYPES:
        raise RegistrationRefused("application_type", 'use "web" or "native"')
    if application_type == "web" and any(not uri.startswith("https://") for uri in redirect_uris):
        raise RegistrationRefused(
            "redirect_uris", 'a "web" application receives codes on https only (loopback http is "native")'
        )


def purge_unused_clients(now: datetime | None = None) -> int:
    """Delete clients that registered themselves (registration or a metadata document) more than
    OAUTH_UNUSED_CLIENT_HOURS ago and never completed a grant (no connection); the number deleted.

    Registration is open to anyone, so a client nobody signed in with is only stored bytes. One that
    comes back registers again (claude.ai and ChatGPT do on a refused client id).
    """
    application = get_application_model()
    since = (now or timezone.now()) - timedelta(hours=settings.OAUTH_UNUSED_CLIENT_HOURS)
    unused = application.objects.filter(
        registration_source__in=[application.RegistrationSource.DCR, application.RegistrationSource.CIMD],
        created__lt=since,
    ).exclude(pk__in=Connection.all_tenants.values("application_id"))
    _, by_model = unused.delete()  # with their pending codes and tokens
    return by_model.get(application._meta.label, 0)
