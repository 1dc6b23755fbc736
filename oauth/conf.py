"""The environment-driven settings of the authorization server: type, default and bounds of each.

``lowcode_platform/settings.py`` reads them at start-up; ``checks.py`` applies the same bounds to the
settings as they are when checks run. Imports nothing but ``core``.
"""

from __future__ import annotations

from core.env_settings import Bool, Int, SettingsGroup


class OAuthSettings(SettingsGroup):
    """OAuth 2.1 for MCP clients; given ``DEBUG``. OAUTH_CIMD_ALLOW_LOOPBACK lets a client metadata
    document be fetched from 127.0.0.1 (local development and tests); private addresses never are.
    Open registration is bounded: the document's size, its redirect URIs (count and length, for
    metadata documents too), registrations per source address an hour, and a registered client that
    never completed a grant is deleted after OAUTH_UNUSED_CLIENT_HOURS (manage.py purge_expired). At
    most OAUTH_CIMD_FETCHES_PER_HOST metadata fetches run at once for one host."""

    OAUTH_ACCESS_TOKEN_SECONDS = Int(3600)
    OAUTH_REFRESH_TOKEN_DAYS = Int(30)
    OAUTH_CIMD_ALLOW_LOOPBACK = Bool(lambda known: known["DEBUG"])
    OAUTH_REGISTRATION_MAX_BYTES = Int(16 * 1024, low=1024)
    OAUTH_CLIENT_MAX_REDIRECT_URIS = Int(10, low=1)
    OAUTH_REDIRECT_URI_MAX_LENGTH = Int(2000, low=20)
    OAUTH_REGISTRATIONS_PER_HOUR = Int(20, low=1)
    OAUTH_UNUSED_CLIENT_HOURS = Int(24, low=1)
    OAUTH_CIMD_FETCHES_PER_HOST = Int(2, low=1)


class LoginSettings(SettingsGroup):
    """Wrong passwords at /accounts/login/: at most this many per (address, username) pair, per source
    address and per username in each window, then 429 without checking (counted in Django's cache,
    see oauth/throttle.py). The per-username ceiling is generous: it only bounds guessing spread over
    many addresses (oauth.views.LoginView says why)."""

    LOGIN_FAILURES_PER_USERNAME = Int(100, low=1)
    LOGIN_FAILURES_PER_SOURCE = Int(50, low=1)
    LOGIN_FAILURES_PER_SOURCE_AND_USERNAME = Int(10, low=1)
    LOGIN_FAILURE_WINDOW_SECONDS = Int(900, low=1)


# The groups the authorization server's system check (oauth.E002) bounds.
GROUPS = (OAuthSettings, LoginSettings)
