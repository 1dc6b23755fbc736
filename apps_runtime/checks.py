"""System checks for the settings the app runtime reads: the bounds ``conf.py`` declares with them,
where screens are served, and the egress settings that are not numbers."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, register

from apps_runtime.conf import GROUPS
from apps_runtime.egress.addresses import parse_networks
from apps_runtime.screen_documents import site_of
from core.setting_bounds import group_errors

PROVIDER_KEYS = ("authorize_url", "token_url", "client_id")


@register()
def check_runtime_settings(app_configs, **kwargs) -> list[Error]:
    # SANDBOX_TIER needs no check: configure_sandbox, in AppConfig.ready, already refuses an unknown tier.
    return group_errors(GROUPS, "apps_runtime.E001")


SCREENS_ORIGIN_TAG = "screens_origin"  # `serve` refuses to start while this check fails


@register(SCREENS_ORIGIN_TAG)
def check_screens_origin(app_configs, **kwargs) -> list[Error]:
    """SCREENS_ORIGIN serves tenant HTML and scripts: on the platform's own site, cookies scoped to
    the parent domain and same-site requests would reach it, so it must be another registrable domain
    (``usercontent.example`` for ``platform.example``, not ``screens.platform.example``)."""
    origin = settings.SCREENS_ORIGIN
    if not origin:
        return []
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        return [
            Error(
                f"SCREENS_ORIGIN={origin!r} is not an origin (scheme://host[:port])", id="apps_runtime.E002"
            )
        ]
    if not settings.PUBLIC_BASE_URL:
        return [
            Error(
                "SCREENS_ORIGIN needs PUBLIC_BASE_URL: the screens' documents may be framed only by the "
                "platform's own pages, named by that origin",
                id="apps_runtime.E003",
            )
        ]
    if site_of(origin) == site_of(settings.PUBLIC_BASE_URL):
        return [
            Error(
                f"SCREENS_ORIGIN ({origin}) is on the platform's own site ({site_of(origin)}): serve screens "
                "from another registrable domain, so no cookie of the platform's reaches tenant scripts",
                id="apps_runtime.E004",
            )
        ]
    return []


@register()
def check_egress_settings(app_configs, **kwargs) -> list[Error]:
    """EGRESS_ALLOWED_NETWORKS are CIDRs; OUTBOUND_OAUTH_PROVIDERS maps names to complete providers."""
    errors = []
    try:
        parse_networks(settings.EGRESS_ALLOWED_NETWORKS)
    except ValueError as err:
        errors.append(
            Error(f"EGRESS_ALLOWED_NETWORKS: {err} (write CIDRs like 127.0.0.1/32)", id="apps_runtime.E010")
        )
    providers = settings.OUTBOUND_OAUTH_PROVIDERS
    if not isinstance(providers, dict):
        return [*errors, Error("OUTBOUND_OAUTH_PROVIDERS must be a JSON object", id="apps_runtime.E011")]
    for name, config in providers.items():
        missing = [key for key in PROVIDER_KEYS if not isinstance(config, dict) or not config.get(key)]
        if missing:
            errors.append(
                Error(
                    f"OUTBOUND_OAUTH_PROVIDERS[{name!r}] lacks {', '.join(missing)}", id="apps_runtime.E011"
                )
            )
    return errors
