"""The platform-wide environment-driven settings (HTTP, database, logs, Celery, metrics) by area.

``settings.py`` reads them at start-up and computes Django's own settings from them; ``checks.py``
applies the same bounds to the settings as they are when checks run.
"""

from __future__ import annotations

from core.env_settings import Bool, Choice, Int, Items, OptionalText, SettingsGroup, Text


class SiteSettings(SettingsGroup):
    """Debug mode, the secret key, hosts, the public origin, the data folder, the database."""

    DEBUG = Bool(False)
    # Required when DEBUG is off; a development checkout gets one generated (settings.py).
    SECRET_KEY = Text("")
    ALLOWED_HOSTS = Items(["127.0.0.1", "localhost", "[::1]", "testserver"])
    # The origin clients reach the platform at: OAuth's issuer, every tenant's MCP resource URL, the
    # cookies' Secure default. Required in production (behind TLS the request cannot tell it); in
    # DEBUG it defaults to the request's own origin.
    PUBLIC_BASE_URL = Text("")
    # The SQLite database, the dev secret, static files, bundles (settings.VAR_DIR); default var/.
    PLATFORM_VAR_DIR = Text("")
    DATABASE_URL = Text("")  # default: SQLite in the var dir
    # Connections are kept open (DB_CONN_MAX_AGE seconds, 0 closes them after each request) and
    # checked before reuse: opening one per request cost more than the query it served.
    DB_CONN_MAX_AGE = Int(600, low=0)


class HttpsSettings(SettingsGroup):
    """HTTPS (production sits behind a TLS-terminating proxy or load balancer); given
    ``PUBLIC_BASE_URL``. SECURE_PROXY_SSL_HEADER: trust the proxy's X-Forwarded-Proto (only behind a
    proxy that sets it and drops a client's own), so Django knows the request came over https
    (redirects, CSRF's origin check). Cookies are Secure by default when the public origin is https.
    HSTS is off until set: browsers remember it for SECURE_HSTS_SECONDS, so it is the operator's
    decision."""

    SECURE_PROXY_SSL_HEADER = Bool(False)
    SECURE_SSL_REDIRECT = Bool(False)
    SECURE_HSTS_SECONDS = Int(0, low=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = Bool(False)
    SECURE_HSTS_PRELOAD = Bool(False)
    SESSION_COOKIE_SECURE = Bool(lambda known: known["PUBLIC_BASE_URL"].startswith("https://"))
    CSRF_COOKIE_SECURE = Bool(lambda known: known["PUBLIC_BASE_URL"].startswith("https://"))


class OperationsSettings(SettingsGroup):
    """Logs, Celery's broker and queue, /metrics."""

    # json: one JSON object per line, each with the error id and the trace id (core/logs.py); `serve`
    # then leaves uvicorn's own lines (access log included) to this configuration too.
    LOG_FORMAT = Choice("plain", ("plain", "json"))
    LOG_LEVEL = Text("INFO")
    # With no broker the tasks run in-process, so the demo needs no Redis.
    CELERY_BROKER_URL = OptionalText(None)
    CELERY_RESULT_BACKEND = OptionalText(None)
    CELERY_QUEUE = Text("celery")
    # /metrics (Prometheus): served to scrapers from these networks (CIDRs), or to any sending
    # "Authorization: Bearer <METRICS_TOKEN>". PROMETHEUS_MULTIPROC_DIR (prometheus-client's own
    # variable, read by it at import) makes the processes of one server share their counts through
    # files there; `serve --workers N` sets it for its workers.
    METRICS_TOKEN = Text("")
    METRICS_ALLOWED_NETWORKS = Items(["127.0.0.0/8", "::1/128"])
    PROMETHEUS_MULTIPROC_DIR = Text("")


# The groups the platform's system check (lowcode_platform.E001) bounds.
class ObservabilitySettings(SettingsGroup):
    """Traces and the audit export (docs/observability.md). OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over
    HTTP, e.g. http://127.0.0.1:4318) turns traces on; the OpenTelemetry SDK reads the other OTEL_*
    variables itself. AUDIT_EXPORT_MAX_ROWS: rows one audit export response streams at most (a SIEM
    resumes with ?after=<the last line's metadata.uid>), read in batches of 500 whatever it is."""

    OTEL_EXPORTER_OTLP_ENDPOINT = Text("")
    OTEL_SERVICE_NAME = Text("lowcode-platform")
    AUDIT_EXPORT_MAX_ROWS = Int(50_000, low=1, high=1_000_000)


GROUPS = (SiteSettings, HttpsSettings, OperationsSettings, ObservabilitySettings)
