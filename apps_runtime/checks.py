"""System checks for the settings the app runtime reads: wire names, the sandbox, jobs, records and
where screens are served."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, register

from apps_runtime.egress.addresses import parse_networks
from apps_runtime.screen_documents import site_of
from core.setting_bounds import Bound, bound_errors

PROVIDER_KEYS = ("authorize_url", "token_url", "client_id")

BOUNDS = {
    # Prefix (20) + "_" + app (40) + "_" + tool (40) can exceed any limit; below 24 the hashed form
    # (limit - 9 characters of name) would keep too little of the name to be readable.
    "MCP_WIRE_NAME_LIMIT": Bound(int, 24, 128),
    "SANDBOX_DEFAULT_TIMEOUT_MS": Bound(int, 100),
    "SANDBOX_MAX_TIMEOUT_MS": Bound(int, 100),  # below SANDBOX_MIN_TIMEOUT_MS no route could run
    "SANDBOX_MEMORY_MB": Bound(int, 16),
    "SANDBOX_MAX_REQUEST_BYTES": Bound(int, 1),
    "SANDBOX_MAX_RESPONSE_BYTES": Bound(int, 1),
    "SANDBOX_MAX_LOG_BYTES": Bound(int, 0),
    "SANDBOX_MAX_DATA_CALLS": Bound(int, 0),
    "SANDBOX_MIN_TIER": Bound(int, 1, 3),
    "SANDBOX_MAX_CONCURRENT_PER_TENANT": Bound(int, 0),  # 0: scales with the host's cores
    "SANDBOX_WARM_WORKERS": Bound(int, -1),  # -1: half of SANDBOX_MAX_CONCURRENT; 0: off
    "SANDBOX_WARM_WORKERS_PER_TENANT": Bound(int, 0),
    "SANDBOX_WARM_MAX_CALLS": Bound(int, 1),
    "SANDBOX_WARM_IDLE_S": Bound(float, 0.001),
    "SANDBOX_WARM_MAX_GROWTH_MB": Bound(int, 1),
    "SANDBOX_WARM_TENANT_MEMORY_MB": Bound(int, 16),
    "SANDBOX_SUPERSEDED_CHECK_S": Bound(float, 0.1),
    "SANDBOX_QUEUE_TIMEOUT_MS": Bound(int, 0),
    "JOBS_MAX_ATTEMPTS": Bound(int, 1),
    "JOBS_RETRY_BACKOFF_SECONDS": Bound(float, 0),
    "JOBS_RETRY_BACKOFF_MAX_SECONDS": Bound(float, 0),
    "JOBS_RUN_GRACE_SECONDS": Bound(int, 0),
    "JOBS_DISPATCH_LOOKBACK_MINUTES": Bound(int, 0),
    "JOBS_QUEUED_RESEND_SECONDS": Bound(int, 1),
    "JOBS_MAX_ENQUEUES_PER_CALL": Bound(int, 0),
    "JOBS_MAX_CHAIN_DEPTH": Bound(int, 1),
    "JOBS_MAX_QUEUED_RUNS_PER_TENANT": Bound(int, 1),
    "JOBS_MAX_RUNS_PER_CALL": Bound(int, 1),
    "JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE": Bound(int, 1),
    "JOBS_IN_PROCESS_WORKERS": Bound(int, 1),
    "JOBS_TENANT_SHARE": Bound(int, 1),
    "RETENTION_ERROR_DAYS": Bound(float, 0.01),
    "RETENTION_ERRORS_PER_TENANT": Bound(int, 1),
    "RETENTION_JOB_RUN_DAYS": Bound(float, 0.01),
    "RETENTION_JOB_RUNS_PER_TENANT": Bound(int, 1),
    "RECORDS_QUERY_MAX_WHERE_KEYS": Bound(int, 1),
    "RECORDS_HEAVY_READ_BYTES": Bound(int, 1),
    "RECORDS_HEAVY_READS_PER_TENANT": Bound(int, 1),
    "RECORDS_MAX_RECORD_BYTES": Bound(int, 1),
    "RECORDS_TENANT_QUOTA_BYTES": Bound(int, 1),
    # A screen document's link: long enough to load the frame on a slow network, short enough that a
    # link copied out of the page soon stops opening it.
    "SCREENS_GRANT_SECONDS": Bound(int, 10, 86400),
    "TENANT_MEMBER_SHARE_PERCENT": Bound(int, 1, 99),
    "TENANT_STORAGE_QUOTA_BYTES": Bound(int, 1024),
    "EGRESS_MAX_REQUESTS_PER_CALL": Bound(int, 0),
    "EGRESS_MAX_BYTES_PER_CALL": Bound(int, 1),
    "EGRESS_MAX_REQUEST_BYTES": Bound(int, 1),
    "EGRESS_MAX_RESPONSE_BYTES": Bound(int, 1),
    "EGRESS_MAX_CONCURRENT_PER_TENANT": Bound(int, 1),
    "EGRESS_MAX_CONCURRENT": Bound(int, 1),
    "EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE": Bound(int, 0),
    "EGRESS_CONNECT_TIMEOUT": Bound(float, 0.01),
    "EGRESS_READ_TIMEOUT": Bound(float, 0.01),
    "EGRESS_MAX_REDIRECTS": Bound(int, 0, 20),
    "RETENTION_OUTBOUND_DAYS": Bound(float, 0.01),
    "RETENTION_OUTBOUND_PER_TENANT": Bound(int, 1),
}


@register()
def check_runtime_settings(app_configs, **kwargs) -> list[Error]:
    # SANDBOX_TIER needs no check: configure_sandbox, in AppConfig.ready, already refuses an unknown tier.
    return bound_errors(BOUNDS, "apps_runtime.E001")


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
