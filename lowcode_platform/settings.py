"""Settings for the platform; the environment is read here and nowhere else."""

import functools
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
# A development checkout keeps its defaults in .env (`make install` writes DEBUG=true there), so
# `manage.py ...` works without `make`. A variable set in the environment always wins, and a host
# without that file (production) still refuses to start without a real SECRET_KEY.
load_dotenv(BASE_DIR / ".env", override=False)
VAR_DIR = Path(os.environ.get("PLATFORM_VAR_DIR", BASE_DIR / "var"))
# var/ holds the SQLite database and the dev secret: owner-only, so handlers dropped to another uid
# cannot read them even at the weakest isolation tier.
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
VAR_DIR.chmod(0o700)


T = TypeVar("T")


def _env(name: str, default: T, *, parse: Callable[[str], T], what: str) -> T:
    """The one environment parser: ``name``'s value through ``parse``; ``default`` when unset or blank.

    Raises:
        ImproperlyConfigured: the value does not parse; the message names the variable and its value.
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw.strip())
    except ValueError as err:
        raise ImproperlyConfigured(f"{name}={raw!r} is not {what}") from err


def _boolean(text: str) -> bool:
    value = text.lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(text)


def _int_pair(text: str) -> tuple[int, int]:
    """``FIRST-LAST`` (e.g. ``1879048192-1879113727``) as a pair of ints."""
    first, _, last = text.partition("-")
    return int(first), int(last)


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


_env_bool = functools.partial(_env, parse=_boolean, what="a boolean (use true or false)")
_env_int = functools.partial(_env, parse=int, what="an integer")
_env_float = functools.partial(_env, parse=float, what="a number")
_env_list = functools.partial(_env, parse=_items, what="a comma-separated list")
_env_int_range = functools.partial(_env, default=None, parse=_int_pair, what="a range FIRST-LAST of integers")


def _env_json(name: str, default: object) -> object:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return json.loads(raw)
    except ValueError as err:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {err}") from err


def _secret_key(debug: bool) -> str:
    key = os.environ.get("SECRET_KEY")
    if key:
        return key
    if not debug:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (on a development checkout, run `make install`, "
            "which writes DEBUG=true into .env)"
        )
    # A development key generated once, so sessions survive restarts of the demo.
    key_file = VAR_DIR / "dev-secret-key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


DEBUG = _env_bool("DEBUG", False)
SECRET_KEY = _secret_key(DEBUG)
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
# The origin clients reach the platform at (read here because the cookie defaults below follow it;
# the OAuth block further down says what else it is).
PUBLIC_BASE_URL = (os.environ.get("PUBLIC_BASE_URL") or "").rstrip("/")

# HTTPS (production sits behind a TLS-terminating proxy or load balancer). SECURE_PROXY_SSL_HEADER:
# trust the proxy's X-Forwarded-Proto (only behind a proxy that sets it and drops a client's own),
# so Django knows the request came over https (redirects, CSRF's origin check). Cookies are Secure
# by default when the public origin is https. HSTS is off until set: browsers remember it for
# SECURE_HSTS_SECONDS, so it is the operator's decision. The load balancer's health check and the
# metrics scrape talk plain http inside the network, so they are never redirected.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if _env_bool("SECURE_PROXY_SSL_HEADER", False) else None
)
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = _env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", PUBLIC_BASE_URL.startswith("https://"))
CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", PUBLIC_BASE_URL.startswith("https://"))
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

# Connections are kept open (DB_CONN_MAX_AGE seconds, 0 closes them after each request) and checked
# before reuse: opening one per request cost more than the query it served on the gateway's threads.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'platform.sqlite3'}",
        conn_max_age=_env_int("DB_CONN_MAX_AGE", 600),
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
STATIC_ROOT = VAR_DIR / "static"
# Made now so WhiteNoise, which scans it when the first request comes, finds it before collectstatic ran.
STATIC_ROOT.mkdir(exist_ok=True)
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

# LOG_FORMAT=json: one JSON object per line, each with the error id and the trace id (core/logs.py);
# `serve` then leaves uvicorn's own lines (access log included) to this configuration too.
LOG_FORMAT = os.environ.get("LOG_FORMAT") or "plain"
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r} is not one of plain, json")

# Celery: with no broker the tasks run in-process, so the demo needs no Redis.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or None
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
if CELERY_TASK_ALWAYS_EAGER:
    # Eager tasks still take a producer to serialize their arguments: keep it off the network.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE") or "celery"
CELERY_TIMEZONE = "UTC"
# With JSON logs the worker keeps the settings' LOGGING instead of its own plain-text root handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
# Beat's own state (when each entry last ran) goes in the var dir, not the working directory.
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# One static beat entry: the dispatcher reads the active versions' schedules from the database, so
# deploys change them without restarting beat. JOBS_DISPATCH_EVERY_SECONDS ticks more often (tests);
# ticks are idempotent. The reaper takes back runs left "running" by a worker that died.
JOBS_DISPATCH_EVERY_SECONDS = _env_int("JOBS_DISPATCH_EVERY_SECONDS", 0)
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
# App jobs: attempts per run (retried when the handler answers 503 or times out), exponential
# backoff between attempts, grace past a route's time limit before a running attempt counts as lost,
# how many past minutes a late dispatcher still fires, when a queued run's task is sent again, and
# how many runs one handler call may queue.
JOBS_MAX_ATTEMPTS = _env_int("JOBS_MAX_ATTEMPTS", 3)
JOBS_RETRY_BACKOFF_SECONDS = _env_float("JOBS_RETRY_BACKOFF_SECONDS", 10.0)
JOBS_RETRY_BACKOFF_MAX_SECONDS = _env_float("JOBS_RETRY_BACKOFF_MAX_SECONDS", 600.0)
JOBS_RUN_GRACE_SECONDS = _env_int("JOBS_RUN_GRACE_SECONDS", 30)
JOBS_DISPATCH_LOOKBACK_MINUTES = _env_int("JOBS_DISPATCH_LOOKBACK_MINUTES", 5)
JOBS_QUEUED_RESEND_SECONDS = _env_int("JOBS_QUEUED_RESEND_SECONDS", 900)
JOBS_MAX_ENQUEUES_PER_CALL = _env_int("JOBS_MAX_ENQUEUES_PER_CALL", 100)
# Runaway chains: a handler that queues its own route would run forever (or double at every level).
# A run queued by a run is one level deeper, up to JOBS_MAX_CHAIN_DEPTH; a tenant may have at most
# JOBS_MAX_QUEUED_RUNS_PER_TENANT runs queued or running. Past either, request.enqueue raises LimitExceeded.
# A tree of runs started by one handler call has at most JOBS_MAX_RUNS_PER_CALL runs in all, and a
# tenant queues at most JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE runs a minute (depth alone allows 100^8).
JOBS_MAX_CHAIN_DEPTH = _env_int("JOBS_MAX_CHAIN_DEPTH", 8)
JOBS_MAX_QUEUED_RUNS_PER_TENANT = _env_int("JOBS_MAX_QUEUED_RUNS_PER_TENANT", 1000)
JOBS_MAX_RUNS_PER_CALL = _env_int("JOBS_MAX_RUNS_PER_CALL", 500)
JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE = _env_int("JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE", 300)
# With no broker, runs execute on JOBS_IN_PROCESS_WORKERS threads of the server, at most
# JOBS_TENANT_SHARE of them for one tenant: never in the thread of the request that queued them.
JOBS_IN_PROCESS_WORKERS = _env_int("JOBS_IN_PROCESS_WORKERS", 2)
JOBS_TENANT_SHARE = _env_int("JOBS_TENANT_SHARE", 1)
# With no broker (the embedded default) the server process ticks the scheduler itself.
JOBS_IN_PROCESS_CLOCK = _env_bool("JOBS_IN_PROCESS_CLOCK", CELERY_TASK_ALWAYS_EAGER)

# Platform settings: a value that is not a number stops start-up here; each app's checks.py
# (apps_runtime, mcp_gateway) checks the ranges with the system checks.
MCP_WIRE_NAME_LIMIT = _env_int("MCP_WIRE_NAME_LIMIT", 64)
MCP_PAGE_SIZE = _env_int("MCP_PAGE_SIZE", 250)
MCP_ALLOWED_ORIGINS = _env_list(
    "MCP_ALLOWED_ORIGINS", ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
)
MCP_CATALOG_CACHE_SECONDS = _env_int("MCP_CATALOG_CACHE_SECONDS", 300)
SANDBOX_DEFAULT_TIMEOUT_MS = _env_int("SANDBOX_DEFAULT_TIMEOUT_MS", 10_000)
SANDBOX_MIN_TIMEOUT_MS = 100
SANDBOX_MAX_TIMEOUT_MS = _env_int("SANDBOX_MAX_TIMEOUT_MS", 30_000)
SANDBOX_MEMORY_MB = _env_int("SANDBOX_MEMORY_MB", 256)
SANDBOX_MAX_REQUEST_BYTES = _env_int("SANDBOX_MAX_REQUEST_BYTES", 1024 * 1024)
SANDBOX_MAX_RESPONSE_BYTES = _env_int("SANDBOX_MAX_RESPONSE_BYTES", 4 * 1024 * 1024)
SANDBOX_MAX_LOG_BYTES = _env_int("SANDBOX_MAX_LOG_BYTES", 64 * 1024)
SANDBOX_MAX_DATA_CALLS = _env_int("SANDBOX_MAX_DATA_CALLS", 1000)
SANDBOX_BUNDLE_DIR = VAR_DIR / "bundles"
# Created now: tier 1 mounts it into the sandbox at start-up, before any bundle is unpacked.
SANDBOX_BUNDLE_DIR.mkdir(exist_ok=True)
# Isolation tiers: 1 namespaces (bubblewrap), 2 Landlock + seccomp, 3 resource limits and a uid drop.
# The server refuses to start below SANDBOX_MIN_TIER; SANDBOX_TIER forces one (tests, benchmarks).
# Tier 3 confines files and processes but not the network: a handler there reaches TCP services on
# loopback (Redis, PostgreSQL, this platform). So the default refuses it, with DEBUG too (make demo):
# an operator who accepts that names it, SANDBOX_MIN_TIER=3.
SANDBOX_MIN_TIER = _env_int("SANDBOX_MIN_TIER", 2)
SANDBOX_TIER = os.environ.get("SANDBOX_TIER") or None
# 0: twice the host's cores, at least 4 (apps_runtime.sandbox.supervisor.default_per_tenant).
SANDBOX_MAX_CONCURRENT_PER_TENANT = _env_int("SANDBOX_MAX_CONCURRENT_PER_TENANT", 0)
# Warm workers (docs/isolation.md): per server process at most SANDBOX_WARM_WORKERS (0: off; -1: half of
# SANDBOX_MAX_CONCURRENT) and SANDBOX_WARM_WORKERS_PER_TENANT (0: a quarter of those), each recycled after
# SANDBOX_WARM_MAX_CALLS calls, SANDBOX_WARM_IDLE_S seconds idle or SANDBOX_WARM_MAX_GROWTH_MB of growth.
SANDBOX_WARM_WORKERS = _env_int("SANDBOX_WARM_WORKERS", -1)
SANDBOX_WARM_WORKERS_PER_TENANT = _env_int("SANDBOX_WARM_WORKERS_PER_TENANT", 0)
SANDBOX_WARM_MAX_CALLS = _env_int("SANDBOX_WARM_MAX_CALLS", 1000)
SANDBOX_WARM_IDLE_S = _env_float("SANDBOX_WARM_IDLE_S", 300.0)
SANDBOX_WARM_MAX_GROWTH_MB = _env_int("SANDBOX_WARM_MAX_GROWTH_MB", 64)
SANDBOX_QUEUE_TIMEOUT_MS = _env_int("SANDBOX_QUEUE_TIMEOUT_MS", 5000)
# Call slots: at most SANDBOX_MAX_CONCURRENT handler runs at once per server process, each with a tmpfs of
# SANDBOX_SCRATCH_MB and (as root) a uid of its own from SANDBOX_UID_RANGE ("first-last"), which must be free
# on the host. Unset: the sandbox's own defaults (docs/isolation.md).
SANDBOX_MAX_CONCURRENT = _env_int("SANDBOX_MAX_CONCURRENT", 64)
SANDBOX_SCRATCH_MB = _env_int("SANDBOX_SCRATCH_MB", 64)
SANDBOX_UID_RANGE = _env_int_range("SANDBOX_UID_RANGE")
# Storage outside records (manage.py purge_expired; beat runs it hourly, the in-process clock with
# no broker): error records, finished job runs and audit rows are kept RETENTION_*_DAYS and at most
# RETENTION_*_PER_TENANT per tenant (error records are also trimmed as each one is written); the
# results MCP tasks keep (until their TTL) count against TENANT_STORAGE_QUOTA_BYTES (below).
RETENTION_ERROR_DAYS = _env_float("RETENTION_ERROR_DAYS", 14.0)
RETENTION_ERRORS_PER_TENANT = _env_int("RETENTION_ERRORS_PER_TENANT", 1000)
RETENTION_JOB_RUN_DAYS = _env_float("RETENTION_JOB_RUN_DAYS", 14.0)
RETENTION_JOB_RUNS_PER_TENANT = _env_int("RETENTION_JOB_RUNS_PER_TENANT", 10_000)
RETENTION_AUDIT_DAYS = _env_float("RETENTION_AUDIT_DAYS", 90.0)
RETENTION_AUDIT_ROWS_PER_TENANT = _env_int("RETENTION_AUDIT_ROWS_PER_TENANT", 100_000)
# Records: a query's filters stay few (each is a JSON key lookup), and a tenant's storage is bounded
# per record and in total (sizes are compact UTF-8 JSON bytes of the record's data).
RECORDS_QUERY_MAX_WHERE_KEYS = _env_int("RECORDS_QUERY_MAX_WHERE_KEYS", 20)
# A query page is cut at its byte budget before its records are loaded; one loading more than
# RECORDS_HEAVY_READ_BYTES holds one of the tenant's RECORDS_HEAVY_READS_PER_TENANT slots (per process).
RECORDS_HEAVY_READ_BYTES = _env_int("RECORDS_HEAVY_READ_BYTES", 1024 * 1024)
RECORDS_HEAVY_READS_PER_TENANT = _env_int("RECORDS_HEAVY_READS_PER_TENANT", 2)
RECORDS_MAX_RECORD_BYTES = _env_int("RECORDS_MAX_RECORD_BYTES", 256 * 1024)
RECORDS_TENANT_QUOTA_BYTES = _env_int("RECORDS_TENANT_QUOTA_BYTES", 100 * 1024 * 1024)

# /metrics (Prometheus): served to scrapers from these networks (CIDRs), or to any sending
# "Authorization: Bearer <METRICS_TOKEN>". PROMETHEUS_MULTIPROC_DIR (prometheus-client's own
# variable, read by it at import) makes the processes of one server share their counts through
# files there; `serve --workers N` sets it for its workers.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN") or ""
METRICS_ALLOWED_NETWORKS = _env_list("METRICS_ALLOWED_NETWORKS", ["127.0.0.0/8", "::1/128"])
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or ""

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# MCP transport: stateful sessions carry list_changed notifications to handshake-era clients;
# set MCP_STATELESS=true behind a load balancer without sticky sessions.
MCP_STATELESS = _env_bool("MCP_STATELESS", False)
MCP_NOTIFY_INTERVAL_SECONDS = _env_float("MCP_NOTIFY_INTERVAL_SECONDS", 1.0)

# MCP fairness: the worker threads that run tool work, and each tenant's share of them. A tenant
# waits for its share on the event loop, before taking a thread, so one tenant flooding slow tools
# cannot starve the others; past MCP_TENANT_QUEUE waiting calls or MCP_TENANT_QUEUE_SECONDS of wait
# a call is refused (retry later). The SDK's session cap is global, so sessions are also capped per
# token, per member and per tenant (at a token's or member's cap its least recently used idle session
# ends to make room), and sessions with no request in flight for MCP_SESSION_IDLE_SECONDS end.
MCP_WORKER_THREADS = _env_int("MCP_WORKER_THREADS", 32)
MCP_TENANT_SHARE = _env_int("MCP_TENANT_SHARE", max(1, MCP_WORKER_THREADS // 4))
MCP_TENANT_QUEUE = _env_int("MCP_TENANT_QUEUE", 16 * MCP_TENANT_SHARE)
MCP_TENANT_QUEUE_SECONDS = _env_float("MCP_TENANT_QUEUE_SECONDS", 30.0)
MCP_SESSIONS_PER_TOKEN = _env_int("MCP_SESSIONS_PER_TOKEN", 20)
MCP_SESSIONS_PER_MEMBER = _env_int("MCP_SESSIONS_PER_MEMBER", 40)
MCP_SESSIONS_PER_TENANT = _env_int("MCP_SESSIONS_PER_TENANT", 200)
MCP_SESSION_IDLE_SECONDS = _env_float("MCP_SESSION_IDLE_SECONDS", 600.0)

# Tool rate limits (manifest rateLimit, tenant setting toolRateLimit) are counted in Redis when this is
# set (production: every replica sees one count), else in the database. Redis down: calls go through
# uncounted, with a warning (mcp_gateway/limits/rate_counters.py says why).
RATE_LIMIT_REDIS_URL = os.environ.get("RATE_LIMIT_REDIS_URL") or None

# MCP transport: each POST is answered with one JSON body, not an event stream (cheaper; list_changed
# still goes on the session's GET stream), except a tools/call that needs the stream for progress or
# elicitation (mcp_gateway.transport.streaming decides per POST). Off: every POST gets an event stream.
MCP_JSON_RESPONSES = _env_bool("MCP_JSON_RESPONSES", True)
# The SDK's OpenTelemetry span around each MCP message: on where an OpenTelemetry SDK exports them.
MCP_OPENTELEMETRY = _env_bool("MCP_OPENTELEMETRY", False)
# Explicit content a handler returns ({"content": [...]}): at most this many items, bytes per item
# (text as UTF-8, an image decoded) and bytes in all; past any bound the call is an isError.
MCP_CONTENT_MAX_ITEMS = _env_int("MCP_CONTENT_MAX_ITEMS", 20)
MCP_CONTENT_MAX_ITEM_BYTES = _env_int("MCP_CONTENT_MAX_ITEM_BYTES", 1024 * 1024)
MCP_CONTENT_MAX_BYTES = _env_int("MCP_CONTENT_MAX_BYTES", 2 * 1024 * 1024)

# MCP tasks (tools with "task" in the manifest): a task's route may take up to TASK_MAX_TIMEOUT_MS
# (routes of other tools stop at SANDBOX_MAX_TIMEOUT_MS); a finished task is kept for the TTL the
# client asks, at most TASK_MAX_TTL_MS (TASK_DEFAULT_TTL_MS when it asks none); a caller may have
# TASK_MAX_ACTIVE_PER_CALLER unfinished tasks and a tenant TASK_MAX_ACTIVE_PER_TENANT; tasks/result
# waits at most TASK_RESULT_WAIT_SECONDS for the end; a stored result is at most TASK_MAX_RESULT_BYTES.
# A member's credentials together may have TASK_MAX_ACTIVE_PER_MEMBER; a tenant may have
# TASK_MAX_QUEUED_PER_TENANT tasks not yet started, and one not started within TASK_QUEUE_SECONDS
# fails without running. Without a broker, TASK_IN_PROCESS_WORKERS threads of the server run them,
# at most TASK_TENANT_SHARE for one tenant, the tenants served in turn. A task queued for
# TASK_RESEND_SECONDS without starting is sent again; one running past its time limit plus
# TASK_RUN_GRACE_SECONDS was lost with its worker and fails.
TASK_MAX_TIMEOUT_MS = _env_int("TASK_MAX_TIMEOUT_MS", 15 * 60 * 1000)
TASK_DEFAULT_TTL_MS = _env_int("TASK_DEFAULT_TTL_MS", 60 * 60 * 1000)
TASK_MAX_TTL_MS = _env_int("TASK_MAX_TTL_MS", 24 * 60 * 60 * 1000)
TASK_POLL_INTERVAL_MS = _env_int("TASK_POLL_INTERVAL_MS", 1000)
TASK_MAX_ACTIVE_PER_CALLER = _env_int("TASK_MAX_ACTIVE_PER_CALLER", 10)
TASK_MAX_ACTIVE_PER_MEMBER = _env_int("TASK_MAX_ACTIVE_PER_MEMBER", 20)
TASK_MAX_ACTIVE_PER_TENANT = _env_int("TASK_MAX_ACTIVE_PER_TENANT", 200)
TASK_MAX_QUEUED_PER_TENANT = _env_int("TASK_MAX_QUEUED_PER_TENANT", 20)
TASK_QUEUE_SECONDS = _env_int("TASK_QUEUE_SECONDS", 600)
TASK_RESULT_WAIT_SECONDS = _env_float("TASK_RESULT_WAIT_SECONDS", 30.0)
TASK_MAX_RESULT_BYTES = _env_int("TASK_MAX_RESULT_BYTES", 1024 * 1024)
TASK_IN_PROCESS_WORKERS = _env_int("TASK_IN_PROCESS_WORKERS", 2)
TASK_TENANT_SHARE = _env_int("TASK_TENANT_SHARE", max(1, TASK_IN_PROCESS_WORKERS // 2))
TASK_RESEND_SECONDS = _env_int("TASK_RESEND_SECONDS", 60)
TASK_RUN_GRACE_SECONDS = _env_int("TASK_RUN_GRACE_SECONDS", 30)

# Tenant agents. AGENT_PROVIDERS lists the model endpoints tenants may use, as JSON: a name for each,
# with its kind ("openai": an OpenAI-compatible chat-completions API; "anthropic": Anthropic's
# Messages API) and base URL. Tenants pick a provider by name and store their own key for it; no URL
# ever comes from a tenant. Keys are encrypted with AGENT_KEY_ENCRYPTION_KEY (default: derived from
# SECRET_KEY). Without a broker, AGENT_RUN_IN_PROCESS_WORKERS threads of the server run the runs, at
# most AGENT_RUN_TENANT_SHARE of them for one tenant (a run mostly waits on its provider); a
# run still running past its wall time plus AGENT_RUN_GRACE_SECONDS was lost and fails, a run queued
# for AGENT_RUN_RESEND_SECONDS is sent again; a running run looks for a cancel every
# AGENT_CANCEL_POLL_SECONDS; the SSE endpoint looks for new steps every AGENT_EVENTS_POLL_SECONDS and
# ends after AGENT_EVENTS_MAX_SECONDS (the client reconnects).
AGENT_PROVIDERS = _env_json(
    "AGENT_PROVIDERS",
    {
        "openai": {"kind": "openai", "base_url": "https://api.openai.com/v1"},
        "anthropic": {"kind": "anthropic", "base_url": "https://api.anthropic.com"},
    },
)
AGENT_KEY_ENCRYPTION_KEY = os.environ.get("AGENT_KEY_ENCRYPTION_KEY") or ""
AGENT_RUN_IN_PROCESS_WORKERS = _env_int("AGENT_RUN_IN_PROCESS_WORKERS", 4)
AGENT_RUN_TENANT_SHARE = _env_int("AGENT_RUN_TENANT_SHARE", 2)
AGENT_RUN_GRACE_SECONDS = _env_int("AGENT_RUN_GRACE_SECONDS", 60)
AGENT_RUN_RESEND_SECONDS = _env_int("AGENT_RUN_RESEND_SECONDS", 120)
AGENT_CANCEL_POLL_SECONDS = _env_float("AGENT_CANCEL_POLL_SECONDS", 0.5)
AGENT_EVENTS_POLL_SECONDS = _env_float("AGENT_EVENTS_POLL_SECONDS", 0.5)
AGENT_EVENTS_MAX_SECONDS = _env_float("AGENT_EVENTS_MAX_SECONDS", 300.0)

# MCP confirmations (tools marked "confirm"): how long the user has to answer, on the call's stream
# (handshake-era clients) or before the sealed requestState of a 2026-07-28 retry expires.
MCP_CONFIRM_SECONDS = _env_float("MCP_CONFIRM_SECONDS", 300.0)

# OAuth 2.1 for MCP clients (claude.ai, ChatGPT, VS Code): the platform's own authorization server,
# django-oauth-toolkit configured for authorization code + PKCE S256 only, open dynamic registration
# and client ID metadata documents, tokens and codes hashed at rest, refresh tokens rotated (a
# replayed one ends the whole connection). PUBLIC_BASE_URL is the issuer and the origin of every
# tenant's MCP resource URL: required in production (behind TLS the request cannot tell it); in
# DEBUG it defaults to the request's own origin. OAUTH_CIMD_ALLOW_LOOPBACK lets a client metadata
# document be fetched from 127.0.0.1 (local development and tests); private addresses never are.
OAUTH_ACCESS_TOKEN_SECONDS = _env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600)
OAUTH_REFRESH_TOKEN_DAYS = _env_int("OAUTH_REFRESH_TOKEN_DAYS", 30)
OAUTH_CIMD_ALLOW_LOOPBACK = _env_bool("OAUTH_CIMD_ALLOW_LOOPBACK", DEBUG)
# Open registration is bounded: the document's size, its redirect URIs (count and length, for
# metadata documents too), registrations per source address an hour, and a registered client that
# never completed a grant is deleted after OAUTH_UNUSED_CLIENT_HOURS (manage.py purge_expired).
# A metadata document's fetch has one deadline in all (CIMD_FETCH_TIMEOUT_SECONDS, however slowly
# the server drips), and at most OAUTH_CIMD_FETCHES_PER_HOST run at once for one host.
OAUTH_REGISTRATION_MAX_BYTES = _env_int("OAUTH_REGISTRATION_MAX_BYTES", 16 * 1024)
OAUTH_CLIENT_MAX_REDIRECT_URIS = _env_int("OAUTH_CLIENT_MAX_REDIRECT_URIS", 10)
OAUTH_REDIRECT_URI_MAX_LENGTH = _env_int("OAUTH_REDIRECT_URI_MAX_LENGTH", 2000)
OAUTH_REGISTRATIONS_PER_HOUR = _env_int("OAUTH_REGISTRATIONS_PER_HOUR", 20)
OAUTH_UNUSED_CLIENT_HOURS = _env_int("OAUTH_UNUSED_CLIENT_HOURS", 24)
OAUTH_CIMD_FETCHES_PER_HOST = _env_int("OAUTH_CIMD_FETCHES_PER_HOST", 2)
# Wrong passwords at /accounts/login/: at most this many per (address, username) pair (the
# agents-run block), per source address and per username in each window, then 429 without checking
# (counted in Django's cache, see oauth/throttle.py). The per-username ceiling is generous: it only
# bounds guessing spread over many addresses (oauth.views.LoginView says why).
LOGIN_FAILURES_PER_USERNAME = _env_int("LOGIN_FAILURES_PER_USERNAME", 100)
LOGIN_FAILURES_PER_SOURCE = _env_int("LOGIN_FAILURES_PER_SOURCE", 50)
LOGIN_FAILURE_WINDOW_SECONDS = _env_int("LOGIN_FAILURE_WINDOW_SECONDS", 900)
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/accounts/"
# A bundle may hold up to 500 files (apps_runtime.manifest.bundle.MAX_FILES); the console uploads a
# folder as one request, so Django's default of 100 files per request would refuse most of them.
DATA_UPLOAD_MAX_NUMBER_FILES = 500
# One of the toolkit's deploy warnings is a decision, not an oversight (README, running in production):
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

# --- agents-run ---
# Wrong passwords for one username from one source address before that pair gets 429 (see
# LOGIN_FAILURES_PER_USERNAME above: the same window, the same counts).
LOGIN_FAILURES_PER_SOURCE_AND_USERNAME = _env_int("LOGIN_FAILURES_PER_SOURCE_AND_USERNAME", 10)

# --- screens ---
# Where screens' documents (tenant HTML and scripts) are served from, e.g. https://usercontent.example:
# an origin on another site than the platform (its own registrable domain, checked at start by
# apps_runtime.checks), so no cookie of the platform's ever reaches it. Unset: they are served from
# the platform's own host, sandboxed to an opaque origin, which is as safe for cookies and storage.
# The same deployment answers it (add its host to ALLOWED_HOSTS); PUBLIC_BASE_URL must be set then.
SCREENS_ORIGIN = (os.environ.get("SCREENS_ORIGIN") or "").rstrip("/")
# How long the signed link to a screen's document (minted by the host page for its visitor) is good for.
SCREENS_GRANT_SECONDS = _env_int("SCREENS_GRANT_SECONDS", 600)
# First: on the SCREENS_ORIGIN host nothing but screens' documents and the SDK is answered.
MIDDLEWARE = ["apps_runtime.screens_origin.ScreensOriginOnly", *MIDDLEWARE]

# --- infra ---
# Agent runs: a finished run (completed, failed, cancelled) and its steps are deleted this many days
# after it ended (manage.py purge_expired; beat runs it hourly, the in-process clock with no broker).
RETENTION_AGENT_RUN_DAYS = _env_float("RETENTION_AGENT_RUN_DAYS", 30.0)

# --- fair-shares ---
# A member (Caller.person_key) may take at most TENANT_MEMBER_SHARE_PERCENT of a tenant-wide cap,
# always below the cap (core.member_shares): tasks waiting to start, runs queued a minute and
# unfinished, stored bytes and error records kept. What a tenant stores outside records (bodies of
# unfinished job runs, kept MCP task results, error records) counts against one quota,
# TENANT_STORAGE_QUOTA_BYTES, a member's share of it included (apps_runtime.storage_quota).
TENANT_MEMBER_SHARE_PERCENT = _env_int("TENANT_MEMBER_SHARE_PERCENT", 25)
TENANT_STORAGE_QUOTA_BYTES = _env_int("TENANT_STORAGE_QUOTA_BYTES", 256 * 1024 * 1024)

# --- sandbox-mem ---
# What one tenant's warm workers may hold in all, per server process (docs/isolation.md, "Cost"): a worker
# whose call takes its tenant over is recycled. Every SANDBOX_SUPERSEDED_CHECK_S seconds a server retires
# its warm workers of app versions a deploy, rollback or undeploy made elsewhere superseded.
SANDBOX_WARM_TENANT_MEMORY_MB = _env_int("SANDBOX_WARM_TENANT_MEMORY_MB", 512)
SANDBOX_SUPERSEDED_CHECK_S = _env_float("SANDBOX_SUPERSEDED_CHECK_S", 5.0)

# --- streams ---
# 2026-07-28 subscriptions/listen streams (each an HTTP response held open): at most this many per
# token or OAuth connection, per member (all their credentials) and per tenant, in each server
# process; one more is refused (JSON-RPC -32029). Each stream ends gracefully after
# MCP_LISTEN_STREAM_SECONDS (the client re-listens), and when its credential is revoked.
MCP_LISTEN_STREAMS_PER_TOKEN = _env_int("MCP_LISTEN_STREAMS_PER_TOKEN", 10)
MCP_LISTEN_STREAMS_PER_MEMBER = _env_int("MCP_LISTEN_STREAMS_PER_MEMBER", 20)
MCP_LISTEN_STREAMS_PER_TENANT = _env_int("MCP_LISTEN_STREAMS_PER_TENANT", 200)
MCP_LISTEN_STREAM_SECONDS = _env_float("MCP_LISTEN_STREAM_SECONDS", 3600.0)

# --- egress ---
# Networks a handler's outbound request may reach although they are loopback, private, link-local,
# CGNAT, multicast or cloud metadata (always refused otherwise, after DNS and on every redirect), as
# CIDRs: e.g. 127.0.0.1/32 for a test's fake API or the demo's status page. Default: none.
EGRESS_ALLOWED_NETWORKS = _env_list("EGRESS_ALLOWED_NETWORKS", [])
# OAuth providers members connect their own accounts to (manifest `connections`), JSON:
# {"crm": {"authorize_url", "token_url", "client_id", "client_secret", "scopes": [...]}}.
OUTBOUND_OAUTH_PROVIDERS = _env_json("OUTBOUND_OAUTH_PROVIDERS", {})
# Outbound requests one handler call may make, and the bytes they may send and receive in all.
EGRESS_MAX_REQUESTS_PER_CALL = _env_int("EGRESS_MAX_REQUESTS_PER_CALL", 20)
EGRESS_MAX_BYTES_PER_CALL = _env_int("EGRESS_MAX_BYTES_PER_CALL", 8 * 1024 * 1024)
# One request's body, and one response's (streamed; the request stops at the cap).
EGRESS_MAX_REQUEST_BYTES = _env_int("EGRESS_MAX_REQUEST_BYTES", 1024 * 1024)
EGRESS_MAX_RESPONSE_BYTES = _env_int("EGRESS_MAX_RESPONSE_BYTES", 2 * 1024 * 1024)
# Outbound requests in flight at once, per tenant (in each process) and in all: a tenant whose upstream
# hangs holds only its own share.
EGRESS_MAX_CONCURRENT_PER_TENANT = _env_int("EGRESS_MAX_CONCURRENT_PER_TENANT", 4)
EGRESS_MAX_CONCURRENT = _env_int("EGRESS_MAX_CONCURRENT", 64)
# Per-request timeouts (seconds), each also cut to what is left of the route's time limit.
EGRESS_CONNECT_TIMEOUT = _env_float("EGRESS_CONNECT_TIMEOUT", 5.0)
EGRESS_READ_TIMEOUT = _env_float("EGRESS_READ_TIMEOUT", 15.0)
EGRESS_MAX_REDIRECTS = _env_int("EGRESS_MAX_REDIRECTS", 5)
# Outbound requests one tenant's handlers may start per minute (in each process).
EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE = _env_int("EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE", 600)
# Outbound requests' audit rows: kept this many days, and at most this many per tenant (purge_expired).
RETENTION_OUTBOUND_DAYS = _env_float("RETENTION_OUTBOUND_DAYS", 30.0)
RETENTION_OUTBOUND_PER_TENANT = _env_int("RETENTION_OUTBOUND_PER_TENANT", 100_000)
