"""Settings for the platform; the environment is read here and nowhere else.

Each environment-driven setting is declared once, with its type, default and bounds, in the
``conf.py`` of the app that reads it (``core.env_settings`` is the mechanism); this module reads
those groups from the environment at start-up, exposes their values under the same names, and
computes Django's own settings from them. A bad value stops start-up naming the variable and what it
must be. Importing it touches no file (``PlatformConfig.ready`` makes the data folders), except on a
development checkout without ``SECRET_KEY``, whose generated key is kept in the data folder.
"""

import os
import secrets
from pathlib import Path
from typing import Any, TypeVar

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

from agents.conf import AgentSettings
from apps_runtime.conf import (
    DeploySettings,
    EgressSettings,
    JobsSettings,
    RecordsSettings,
    RetentionSettings,
    SandboxSettings,
    ScreensSettings,
    TenantShareSettings,
)
from core.env_settings import Bool, EnvSetting, Float, Int, IntRange, Items, Json
from lowcode_platform.conf import HttpsSettings, ObservabilitySettings, OperationsSettings, SiteSettings
from mcp_gateway.conf import (
    ApprovalSettings,
    AuditRetentionSettings,
    CodeModeSettings,
    FairnessSettings,
    TaskSettings,
    ToolSettings,
    TransportSettings,
)
from oauth.conf import LoginSettings, OAuthSettings

BASE_DIR = Path(__file__).resolve().parent.parent
# A development checkout keeps its defaults in .env (`make install` writes DEBUG=true there), so
# `manage.py ...` works without `make`. A variable set in the environment always wins, and a host
# without that file (production) still refuses to start without a real SECRET_KEY.
load_dotenv(BASE_DIR / ".env", override=False)

T = TypeVar("T")


# The helpers of the one environment parser before the groups (core.env_settings): no block here uses
# them any more; kept while branches that still add such blocks are merged (then move those into a
# group). Each reads one variable with the same rules and messages.
class _Parsed(EnvSetting[T]):
    def __init__(self, default: T, parse: Any, what: str):
        super().__init__(default)
        self._parse, self.what = parse, what

    def parse(self, text: str) -> T:
        return self._parse(text)


def _env(name: str, default: T, *, parse: Any, what: str) -> T:
    """``name``'s value through ``parse``; ``default`` when unset or blank.

    Raises:
        ImproperlyConfigured: the value does not parse; the message names the variable and its value.
    """
    return _Parsed(default, parse, what).read(os.environ, {}, name)


def _env_bool(name: str, default: bool) -> bool:
    return Bool(default).read(os.environ, {}, name)


def _env_int(name: str, default: int) -> int:
    return Int(default).read(os.environ, {}, name)


def _env_float(name: str, default: float) -> float:
    return Float(default).read(os.environ, {}, name)


def _env_list(name: str, default: list[str]) -> list[str]:
    return Items(default).read(os.environ, {}, name)


def _env_int_range(name: str) -> tuple[int, int] | None:
    return IntRange(None).read(os.environ, {}, name)


def _env_json(name: str, default: object) -> object:
    return Json(default).read(os.environ, {}, name)


def _dev_secret_key(var_dir: Path) -> str:
    """A development key generated once and kept in ``var_dir``, so sessions survive restarts."""
    key_file = var_dir / "dev-secret-key"
    if not key_file.exists():
        var_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


_site = SiteSettings(os.environ)
DEBUG = _site.DEBUG
# var/ holds the SQLite database and the dev secret: owner-only (PlatformConfig.ready makes it so),
# so handlers dropped to another uid cannot read them even at the weakest isolation tier.
VAR_DIR = Path(_site.PLATFORM_VAR_DIR or BASE_DIR / "var")
if _site.SECRET_KEY:
    SECRET_KEY = _site.SECRET_KEY
elif DEBUG:
    SECRET_KEY = _dev_secret_key(VAR_DIR)
else:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set when DEBUG is off (on a development checkout, run `make install`, "
        "which writes DEBUG=true into .env)"
    )
ALLOWED_HOSTS = _site.ALLOWED_HOSTS
PUBLIC_BASE_URL = _site.PUBLIC_BASE_URL.rstrip("/")

# HTTPS (lowcode_platform.conf.HttpsSettings). The load balancer's health check and the metrics
# scrape talk plain http inside the network, so they are never redirected.
_https = HttpsSettings(os.environ, PUBLIC_BASE_URL=PUBLIC_BASE_URL)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if _https.SECURE_PROXY_SSL_HEADER else None
SECURE_SSL_REDIRECT = _https.SECURE_SSL_REDIRECT
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = _https.SECURE_HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = _https.SECURE_HSTS_INCLUDE_SUBDOMAINS
SECURE_HSTS_PRELOAD = _https.SECURE_HSTS_PRELOAD
SESSION_COOKIE_SECURE = _https.SESSION_COOKIE_SECURE
CSRF_COOKIE_SECURE = _https.CSRF_COOKIE_SECURE
# A form posted from the public origin passes CSRF's origin check even when the proxy in front
# changes the Host the platform sees.
CSRF_TRUSTED_ORIGINS = [PUBLIC_BASE_URL] if PUBLIC_BASE_URL else []

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "tenants",
    "apps_runtime",
    "mcp_gateway",
    "agents",
    "oauth2_provider",
    "oauth",
    "console",
    "lowcode_platform",  # the platform-wide commands: serve, seed_demo
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's CSS and JS) from the app itself, also with DEBUG off: no proxy rule
    # needed. It serves what `manage.py collectstatic` put in STATIC_ROOT.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "lowcode_platform.urls"
WSGI_APPLICATION = "lowcode_platform.wsgi.application"
ASGI_APPLICATION = "lowcode_platform.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        _site.DATABASE_URL or f"sqlite:///{VAR_DIR / 'platform.sqlite3'}",
        conn_max_age=_site.DB_CONN_MAX_AGE,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the server read while a management command deploys. synchronous=NORMAL: in WAL mode a
    # commit survives a crash of the process (only a power cut may lose the last ones) without an
    # fsync per commit.
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
    DATABASES["default"]["OPTIONS"]["timeout"] = 20
    # A transaction takes the write lock when it begins (BEGIN IMMEDIATE), so a writer waits up to
    # the timeout for another. Deferred, one that read first and then wrote after another thread's
    # commit (an in-process job's, say) failed at once with "database is locked": SQLite cannot
    # wait there without risking a deadlock.
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # Tests too run on a file (WAL) rather than Django's default in-memory database, which locks a
    # table being written against every reader ("database table is locked") where the platform's
    # own SQLite lets readers through and makes writers wait.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Django's hashers (people's passwords use the first), and one for OAuth client secrets: random and
# server-generated, they need no slow hashing (oauth/hashers.py).
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
    "oauth.hashers.ClientSecretHasher",
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
# PlatformConfig.ready makes it, so WhiteNoise, which scans it when the first request comes, finds it
# before collectstatic ran.
STATIC_ROOT = VAR_DIR / "static"
# Compressed copies next to each file (gzip, and brotli when installed), served with far-future
# caching only for hashed names; no manifest, so a page still renders before collectstatic ran.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "lowcode_platform.api_errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Low-code platform API",
    "DESCRIPTION": "Tenants, members, tokens, settings and app deploys.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

_ops = OperationsSettings(os.environ)
LOG_FORMAT = _ops.LOG_FORMAT

# Celery: with no broker the tasks run in-process, so the demo needs no Redis.
CELERY_BROKER_URL = _ops.CELERY_BROKER_URL
CELERY_RESULT_BACKEND = _ops.CELERY_RESULT_BACKEND
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
if CELERY_TASK_ALWAYS_EAGER:
    # Eager tasks still take a producer to serialize their arguments: keep it off the network.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = _ops.CELERY_QUEUE
CELERY_TIMEZONE = "UTC"
# With JSON logs the worker keeps the settings' LOGGING instead of its own plain-text root handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
# Beat's own state (when each entry last ran) goes in the var dir, not the working directory.
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# App jobs (apps_runtime.conf.JobsSettings).
_jobs = JobsSettings(os.environ, CELERY_TASK_ALWAYS_EAGER=CELERY_TASK_ALWAYS_EAGER)
JOBS_DISPATCH_EVERY_SECONDS = _jobs.JOBS_DISPATCH_EVERY_SECONDS
# One static beat entry: the dispatcher reads the active versions' schedules from the database, so
# deploys change them without restarting beat. JOBS_DISPATCH_EVERY_SECONDS ticks more often (tests);
# ticks are idempotent. The reaper takes back runs left "running" by a worker that died.
CELERY_BEAT_SCHEDULE = {
    # Stale ticks (workers down for a while) are dropped: the next tick's look-back covers them.
    "dispatch-app-jobs": {
        "task": "apps_runtime.dispatch_due_jobs",
        "schedule": JOBS_DISPATCH_EVERY_SECONDS or crontab(),
        "options": {"expires": 240},
    },
    "reap-job-runs": {
        "task": "apps_runtime.reap_job_runs",
        "schedule": JOBS_DISPATCH_EVERY_SECONDS or 60.0,
        "options": {"expires": 240},
    },
    # MCP tasks: resend forgotten ones, fail lost ones, purge those past their TTL.
    "sweep-tool-tasks": {
        "task": "mcp_gateway.sweep_tool_tasks",
        "schedule": JOBS_DISPATCH_EVERY_SECONDS or 60.0,
        "options": {"expires": 240},
    },
    # Every app's expired rows (core.retention's registry): error records, job runs, audit rows,
    # agent runs, unused OAuth clients.
    "purge-expired": {
        "task": "lowcode_platform.purge_expired",
        "schedule": 3600.0,
        "options": {"expires": 3000},
    },
    # Tenant agents: fail runs lost with their worker, resend forgotten queued ones.
    "sweep-agent-runs": {
        "task": "agents.sweep_runs",
        "schedule": JOBS_DISPATCH_EVERY_SECONDS or 60.0,
        "options": {"expires": 240},
    },
}
JOBS_MAX_ATTEMPTS = _jobs.JOBS_MAX_ATTEMPTS
JOBS_RETRY_BACKOFF_SECONDS = _jobs.JOBS_RETRY_BACKOFF_SECONDS
JOBS_RETRY_BACKOFF_MAX_SECONDS = _jobs.JOBS_RETRY_BACKOFF_MAX_SECONDS
JOBS_RUN_GRACE_SECONDS = _jobs.JOBS_RUN_GRACE_SECONDS
JOBS_DISPATCH_LOOKBACK_MINUTES = _jobs.JOBS_DISPATCH_LOOKBACK_MINUTES
JOBS_QUEUED_RESEND_SECONDS = _jobs.JOBS_QUEUED_RESEND_SECONDS
JOBS_MAX_ENQUEUES_PER_CALL = _jobs.JOBS_MAX_ENQUEUES_PER_CALL
JOBS_MAX_CHAIN_DEPTH = _jobs.JOBS_MAX_CHAIN_DEPTH
JOBS_MAX_QUEUED_RUNS_PER_TENANT = _jobs.JOBS_MAX_QUEUED_RUNS_PER_TENANT
JOBS_MAX_RUNS_PER_CALL = _jobs.JOBS_MAX_RUNS_PER_CALL
JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE = _jobs.JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE
JOBS_IN_PROCESS_WORKERS = _jobs.JOBS_IN_PROCESS_WORKERS
JOBS_TENANT_SHARE = _jobs.JOBS_TENANT_SHARE
JOBS_IN_PROCESS_CLOCK = _jobs.JOBS_IN_PROCESS_CLOCK

# Wire names and the handler sandbox (apps_runtime.conf).
MCP_WIRE_NAME_LIMIT = DeploySettings(os.environ).MCP_WIRE_NAME_LIMIT
_sandbox = SandboxSettings(os.environ)
SANDBOX_DEFAULT_TIMEOUT_MS = _sandbox.SANDBOX_DEFAULT_TIMEOUT_MS
SANDBOX_MIN_TIMEOUT_MS = 100
SANDBOX_MAX_TIMEOUT_MS = _sandbox.SANDBOX_MAX_TIMEOUT_MS
SANDBOX_MEMORY_MB = _sandbox.SANDBOX_MEMORY_MB
SANDBOX_MAX_REQUEST_BYTES = _sandbox.SANDBOX_MAX_REQUEST_BYTES
SANDBOX_MAX_RESPONSE_BYTES = _sandbox.SANDBOX_MAX_RESPONSE_BYTES
SANDBOX_MAX_LOG_BYTES = _sandbox.SANDBOX_MAX_LOG_BYTES
SANDBOX_MAX_DATA_CALLS = _sandbox.SANDBOX_MAX_DATA_CALLS
# PlatformConfig.ready makes it: tier 1 mounts it into the sandbox, before any bundle is unpacked.
SANDBOX_BUNDLE_DIR = VAR_DIR / "bundles"
SANDBOX_MIN_TIER = _sandbox.SANDBOX_MIN_TIER
SANDBOX_TIER = _sandbox.SANDBOX_TIER
SANDBOX_MAX_CONCURRENT_PER_TENANT = _sandbox.SANDBOX_MAX_CONCURRENT_PER_TENANT
SANDBOX_WARM_WORKERS = _sandbox.SANDBOX_WARM_WORKERS
SANDBOX_WARM_WORKERS_PER_TENANT = _sandbox.SANDBOX_WARM_WORKERS_PER_TENANT
SANDBOX_WARM_MAX_CALLS = _sandbox.SANDBOX_WARM_MAX_CALLS
SANDBOX_WARM_IDLE_S = _sandbox.SANDBOX_WARM_IDLE_S
SANDBOX_WARM_MAX_GROWTH_MB = _sandbox.SANDBOX_WARM_MAX_GROWTH_MB
SANDBOX_WARM_TENANT_MEMORY_MB = _sandbox.SANDBOX_WARM_TENANT_MEMORY_MB
SANDBOX_SUPERSEDED_CHECK_S = _sandbox.SANDBOX_SUPERSEDED_CHECK_S
SANDBOX_QUEUE_TIMEOUT_MS = _sandbox.SANDBOX_QUEUE_TIMEOUT_MS
SANDBOX_MAX_CONCURRENT = _sandbox.SANDBOX_MAX_CONCURRENT
SANDBOX_SCRATCH_MB = _sandbox.SANDBOX_SCRATCH_MB
SANDBOX_UID_RANGE = _sandbox.SANDBOX_UID_RANGE

# Retention (apps_runtime.conf.RetentionSettings, mcp_gateway.conf.AuditRetentionSettings).
_retention = RetentionSettings(os.environ)
RETENTION_ERROR_DAYS = _retention.RETENTION_ERROR_DAYS
RETENTION_ERRORS_PER_TENANT = _retention.RETENTION_ERRORS_PER_TENANT
RETENTION_JOB_RUN_DAYS = _retention.RETENTION_JOB_RUN_DAYS
RETENTION_JOB_RUNS_PER_TENANT = _retention.RETENTION_JOB_RUNS_PER_TENANT
RETENTION_OUTBOUND_DAYS = _retention.RETENTION_OUTBOUND_DAYS
RETENTION_OUTBOUND_PER_TENANT = _retention.RETENTION_OUTBOUND_PER_TENANT
RETENTION_CALL_LOG_BYTES = _retention.RETENTION_CALL_LOG_BYTES
RETENTION_CALL_LOGS_PER_APP = _retention.RETENTION_CALL_LOGS_PER_APP
RETENTION_CALL_LOGS_PER_TENANT = _retention.RETENTION_CALL_LOGS_PER_TENANT
RETENTION_CALL_LOG_HOURS = _retention.RETENTION_CALL_LOG_HOURS
# A member's share of tenant-wide caps, and the one quota of what a tenant stores outside records
# (apps_runtime.conf.TenantShareSettings).
_shares = TenantShareSettings(os.environ)
TENANT_MEMBER_SHARE_PERCENT = _shares.TENANT_MEMBER_SHARE_PERCENT
TENANT_STORAGE_QUOTA_BYTES = _shares.TENANT_STORAGE_QUOTA_BYTES
_audit_retention = AuditRetentionSettings(os.environ)
RETENTION_AUDIT_DAYS = _audit_retention.RETENTION_AUDIT_DAYS
RETENTION_AUDIT_ROWS_PER_TENANT = _audit_retention.RETENTION_AUDIT_ROWS_PER_TENANT

# Records (apps_runtime.conf.RecordsSettings).
_records = RecordsSettings(os.environ)
RECORDS_QUERY_MAX_WHERE_KEYS = _records.RECORDS_QUERY_MAX_WHERE_KEYS
RECORDS_HEAVY_READ_BYTES = _records.RECORDS_HEAVY_READ_BYTES
RECORDS_HEAVY_READS_PER_TENANT = _records.RECORDS_HEAVY_READS_PER_TENANT
RECORDS_MAX_RECORD_BYTES = _records.RECORDS_MAX_RECORD_BYTES
RECORDS_TENANT_QUOTA_BYTES = _records.RECORDS_TENANT_QUOTA_BYTES

# /metrics (lowcode_platform.conf.OperationsSettings).
METRICS_TOKEN = _ops.METRICS_TOKEN
METRICS_ALLOWED_NETWORKS = _ops.METRICS_ALLOWED_NETWORKS
PROMETHEUS_MULTIPROC_DIR = _ops.PROMETHEUS_MULTIPROC_DIR

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": _ops.LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# The MCP gateway (mcp_gateway.conf): transport and sessions, fair shares, tools, tasks.
_transport = TransportSettings(os.environ)
MCP_STATELESS = _transport.MCP_STATELESS
MCP_NOTIFY_INTERVAL_SECONDS = _transport.MCP_NOTIFY_INTERVAL_SECONDS
MCP_ALLOWED_ORIGINS = _transport.MCP_ALLOWED_ORIGINS
MCP_SESSIONS_PER_TOKEN = _transport.MCP_SESSIONS_PER_TOKEN
MCP_SESSIONS_PER_MEMBER = _transport.MCP_SESSIONS_PER_MEMBER
MCP_SESSIONS_PER_TENANT = _transport.MCP_SESSIONS_PER_TENANT
MCP_SESSION_IDLE_SECONDS = _transport.MCP_SESSION_IDLE_SECONDS
MCP_LISTEN_STREAMS_PER_TOKEN = _transport.MCP_LISTEN_STREAMS_PER_TOKEN
MCP_LISTEN_STREAMS_PER_MEMBER = _transport.MCP_LISTEN_STREAMS_PER_MEMBER
MCP_LISTEN_STREAMS_PER_TENANT = _transport.MCP_LISTEN_STREAMS_PER_TENANT
MCP_LISTEN_STREAM_SECONDS = _transport.MCP_LISTEN_STREAM_SECONDS
MCP_JSON_RESPONSES = _transport.MCP_JSON_RESPONSES
MCP_OPENTELEMETRY = _transport.MCP_OPENTELEMETRY
_fairness = FairnessSettings(os.environ)
MCP_WORKER_THREADS = _fairness.MCP_WORKER_THREADS
MCP_TENANT_SHARE = _fairness.MCP_TENANT_SHARE
MCP_TENANT_QUEUE = _fairness.MCP_TENANT_QUEUE
MCP_TENANT_QUEUE_SECONDS = _fairness.MCP_TENANT_QUEUE_SECONDS
_tools = ToolSettings(os.environ)
MCP_PAGE_SIZE = _tools.MCP_PAGE_SIZE
MCP_CATALOG_CACHE_SECONDS = _tools.MCP_CATALOG_CACHE_SECONDS
MCP_CONTENT_MAX_ITEMS = _tools.MCP_CONTENT_MAX_ITEMS
MCP_CONTENT_MAX_ITEM_BYTES = _tools.MCP_CONTENT_MAX_ITEM_BYTES
MCP_CONTENT_MAX_BYTES = _tools.MCP_CONTENT_MAX_BYTES
MCP_CONFIRM_SECONDS = _tools.MCP_CONFIRM_SECONDS
RATE_LIMIT_REDIS_URL = _tools.RATE_LIMIT_REDIS_URL
_tasks = TaskSettings(os.environ)
TASK_MAX_TIMEOUT_MS = _tasks.TASK_MAX_TIMEOUT_MS
TASK_DEFAULT_TTL_MS = _tasks.TASK_DEFAULT_TTL_MS
TASK_MAX_TTL_MS = _tasks.TASK_MAX_TTL_MS
TASK_POLL_INTERVAL_MS = _tasks.TASK_POLL_INTERVAL_MS
TASK_MAX_ACTIVE_PER_CALLER = _tasks.TASK_MAX_ACTIVE_PER_CALLER
TASK_MAX_ACTIVE_PER_MEMBER = _tasks.TASK_MAX_ACTIVE_PER_MEMBER
TASK_MAX_ACTIVE_PER_TENANT = _tasks.TASK_MAX_ACTIVE_PER_TENANT
TASK_MAX_QUEUED_PER_TENANT = _tasks.TASK_MAX_QUEUED_PER_TENANT
TASK_QUEUE_SECONDS = _tasks.TASK_QUEUE_SECONDS
TASK_RESULT_WAIT_SECONDS = _tasks.TASK_RESULT_WAIT_SECONDS
TASK_MAX_RESULT_BYTES = _tasks.TASK_MAX_RESULT_BYTES
TASK_IN_PROCESS_WORKERS = _tasks.TASK_IN_PROCESS_WORKERS
TASK_TENANT_SHARE = _tasks.TASK_TENANT_SHARE
TASK_RESEND_SECONDS = _tasks.TASK_RESEND_SECONDS
TASK_RUN_GRACE_SECONDS = _tasks.TASK_RUN_GRACE_SECONDS

# Tenant agents (agents.conf.AgentSettings).
_agents = AgentSettings(os.environ)
AGENT_PROVIDERS = _agents.AGENT_PROVIDERS
AGENT_KEY_ENCRYPTION_KEY = _agents.AGENT_KEY_ENCRYPTION_KEY
AGENT_RUN_IN_PROCESS_WORKERS = _agents.AGENT_RUN_IN_PROCESS_WORKERS
AGENT_RUN_TENANT_SHARE = _agents.AGENT_RUN_TENANT_SHARE
AGENT_RUN_GRACE_SECONDS = _agents.AGENT_RUN_GRACE_SECONDS
AGENT_RUN_RESEND_SECONDS = _agents.AGENT_RUN_RESEND_SECONDS
AGENT_CANCEL_POLL_SECONDS = _agents.AGENT_CANCEL_POLL_SECONDS
AGENT_EVENTS_POLL_SECONDS = _agents.AGENT_EVENTS_POLL_SECONDS
AGENT_EVENTS_MAX_SECONDS = _agents.AGENT_EVENTS_MAX_SECONDS
RETENTION_AGENT_RUN_DAYS = _agents.RETENTION_AGENT_RUN_DAYS

# OAuth 2.1 for MCP clients (claude.ai, ChatGPT, VS Code): the platform's own authorization server,
# django-oauth-toolkit configured for authorization code + PKCE S256 only, open dynamic registration
# and client ID metadata documents, tokens and codes hashed at rest, refresh tokens rotated (a
# replayed one ends the whole connection). PUBLIC_BASE_URL is the issuer and the origin of every
# tenant's MCP resource URL. A metadata document's fetch has one deadline in all
# (CIMD_FETCH_TIMEOUT_SECONDS, however slowly the server drips). Bounds: oauth.conf.
_oauth = OAuthSettings(os.environ, DEBUG=DEBUG)
OAUTH_ACCESS_TOKEN_SECONDS = _oauth.OAUTH_ACCESS_TOKEN_SECONDS
OAUTH_REFRESH_TOKEN_DAYS = _oauth.OAUTH_REFRESH_TOKEN_DAYS
OAUTH_CIMD_ALLOW_LOOPBACK = _oauth.OAUTH_CIMD_ALLOW_LOOPBACK
OAUTH_REGISTRATION_MAX_BYTES = _oauth.OAUTH_REGISTRATION_MAX_BYTES
OAUTH_CLIENT_MAX_REDIRECT_URIS = _oauth.OAUTH_CLIENT_MAX_REDIRECT_URIS
OAUTH_REDIRECT_URI_MAX_LENGTH = _oauth.OAUTH_REDIRECT_URI_MAX_LENGTH
OAUTH_REGISTRATIONS_PER_HOUR = _oauth.OAUTH_REGISTRATIONS_PER_HOUR
OAUTH_UNUSED_CLIENT_HOURS = _oauth.OAUTH_UNUSED_CLIENT_HOURS
OAUTH_CIMD_FETCHES_PER_HOST = _oauth.OAUTH_CIMD_FETCHES_PER_HOST
_login = LoginSettings(os.environ)
LOGIN_FAILURES_PER_USERNAME = _login.LOGIN_FAILURES_PER_USERNAME
LOGIN_FAILURES_PER_SOURCE = _login.LOGIN_FAILURES_PER_SOURCE
LOGIN_FAILURES_PER_SOURCE_AND_USERNAME = _login.LOGIN_FAILURES_PER_SOURCE_AND_USERNAME
LOGIN_FAILURE_WINDOW_SECONDS = _login.LOGIN_FAILURE_WINDOW_SECONDS
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/accounts/"
# A bundle may hold up to 500 files (apps_runtime.manifest.bundle.MAX_FILES); the console uploads a
# folder as one request, so Django's default of 100 files per request would refuse most of them.
DATA_UPLOAD_MAX_NUMBER_FILES = 500
# One of the toolkit's deploy warnings is a decision, not an oversight (docs/production.md):
# W008 says http redirect URIs are allowed, and oauth/clients.py allows them only on loopback, for
# native apps (RFC 8252).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth.AuthorizationCode"
OAUTH2_PROVIDER = {
    "SCOPES": {"mcp": "Use a tenant's MCP tools as you"},
    "DEFAULT_SCOPES": ["mcp"],
    "OAUTH2_VALIDATOR_CLASS": "oauth.validator.PlatformValidator",
    "ACCESS_TOKEN_GENERATOR": "oauth.tokens.access_token",
    "REFRESH_TOKEN_GENERATOR": "oauth.tokens.refresh_token",
    "ACCESS_TOKEN_EXPIRE_SECONDS": OAUTH_ACCESS_TOKEN_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": OAUTH_REFRESH_TOKEN_DAYS * 86400,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "PKCE_REQUIRED": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],  # http only on loopback: oauth/clients.py
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    # RFC 9207 `iss` in authorization responses; oauth/consent.py sets it to the metadata's issuer.
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "oauth.cimd.PlatformMetadataFetcher",
    "CIMD_FETCH_TIMEOUT_SECONDS": 3,
    "CIMD_MAX_DOCUMENT_SIZE": 8 * 1024,
    "CLIENT_SECRET_HASHER": "pbkdf2_sha256_secret",
}

# Handlers' outbound requests (apps_runtime.conf.EgressSettings).
_egress = EgressSettings(os.environ)
EGRESS_ALLOWED_NETWORKS = _egress.EGRESS_ALLOWED_NETWORKS
OUTBOUND_OAUTH_PROVIDERS = _egress.OUTBOUND_OAUTH_PROVIDERS
EGRESS_MAX_REQUESTS_PER_CALL = _egress.EGRESS_MAX_REQUESTS_PER_CALL
EGRESS_MAX_BYTES_PER_CALL = _egress.EGRESS_MAX_BYTES_PER_CALL
EGRESS_MAX_REQUEST_BYTES = _egress.EGRESS_MAX_REQUEST_BYTES
EGRESS_MAX_RESPONSE_BYTES = _egress.EGRESS_MAX_RESPONSE_BYTES
EGRESS_MAX_CONCURRENT_PER_TENANT = _egress.EGRESS_MAX_CONCURRENT_PER_TENANT
EGRESS_MAX_CONCURRENT = _egress.EGRESS_MAX_CONCURRENT
EGRESS_CONNECT_TIMEOUT = _egress.EGRESS_CONNECT_TIMEOUT
EGRESS_READ_TIMEOUT = _egress.EGRESS_READ_TIMEOUT
EGRESS_MAX_REDIRECTS = _egress.EGRESS_MAX_REDIRECTS
EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE = _egress.EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE

# Screens (apps_runtime.conf.ScreensSettings).
_screens = ScreensSettings(os.environ)
SCREENS_ORIGIN = _screens.SCREENS_ORIGIN.rstrip("/")
SCREENS_GRANT_SECONDS = _screens.SCREENS_GRANT_SECONDS
# First: on the SCREENS_ORIGIN host nothing but screens' documents and the SDK is answered.
MIDDLEWARE = ["apps_runtime.screens_origin.ScreensOriginOnly", *MIDDLEWARE]

# --- observe ---
# Traces and the audit export (lowcode_platform.conf.ObservabilitySettings, docs/observability.md).
_observability = ObservabilitySettings(os.environ)
OTEL_EXPORTER_OTLP_ENDPOINT = _observability.OTEL_EXPORTER_OTLP_ENDPOINT
OTEL_SERVICE_NAME = _observability.OTEL_SERVICE_NAME or "lowcode-platform"
AUDIT_EXPORT_MAX_ROWS = _observability.AUDIT_EXPORT_MAX_ROWS

# --- codemode ---
# Code mode (mcp_gateway.conf.CodeModeSettings): its limits follow the sandbox's.
_code_mode = CodeModeSettings(os.environ)
CODE_MODE_MAX_CALLS = _code_mode.CODE_MODE_MAX_CALLS
if CODE_MODE_MAX_CALLS > SANDBOX_MAX_DATA_CALLS:
    raise ImproperlyConfigured(
        f"CODE_MODE_MAX_CALLS={CODE_MODE_MAX_CALLS} must be at most "
        f"SANDBOX_MAX_DATA_CALLS ({SANDBOX_MAX_DATA_CALLS})"
    )
CODE_MODE_TIMEOUT_MS = min(_code_mode.CODE_MODE_TIMEOUT_MS, SANDBOX_MAX_TIMEOUT_MS)
CODE_MODE_MAX_OUTPUT_CHARS = _code_mode.CODE_MODE_MAX_OUTPUT_CHARS

# --- approvals ---
# Out-of-band approvals of "confirm" tools (mcp_gateway.conf.ApprovalSettings).
_approvals = ApprovalSettings(os.environ)
APPROVAL_TTL_SECONDS = _approvals.APPROVAL_TTL_SECONDS
APPROVALS_MAX_PENDING_PER_MEMBER = _approvals.APPROVALS_MAX_PENDING_PER_MEMBER
# OAuth scopes: "mcp" and the app scopes a connection may be narrowed to (described by rule).
OAUTH2_PROVIDER["SCOPES_BACKEND_CLASS"] = "oauth.scopes.PlatformScopes"
