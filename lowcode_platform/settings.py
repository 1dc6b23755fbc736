"""Settings for the platform; the environment is read here and nowhere else."""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("PLATFORM_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false)")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as err:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from err


def _env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def _secret_key(debug: bool) -> str:
    key = os.environ.get("SECRET_KEY")
    if key:
        return key
    if not debug:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    # A development key generated once, so sessions survive restarts of the demo.
    key_file = VAR_DIR / "dev-secret-key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


DEBUG = _env_bool("DEBUG", False)
SECRET_KEY = _secret_key(DEBUG)
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
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
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'platform.sqlite3'}",
        conn_max_age=_env_int("DB_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the server read while a management command deploys.
    DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = "PRAGMA journal_mode=WAL;"
    DATABASES["default"]["OPTIONS"]["timeout"] = 20

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "tenants.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Low-code platform API",
    "DESCRIPTION": "Tenants, members, tokens, settings and app deploys.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# Celery: with no broker the tasks run in-process, so the demo needs no Redis.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or None
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# Platform settings (validated by system checks in tenants/checks.py and apps_runtime/checks.py).
MCP_WIRE_NAME_LIMIT = _env_int("MCP_WIRE_NAME_LIMIT", 64)
MCP_PAGE_SIZE = _env_int("MCP_PAGE_SIZE", 100)
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# MCP transport: stateful sessions carry list_changed notifications to handshake-era clients;
# set MCP_STATELESS=true behind a load balancer without sticky sessions.
MCP_STATELESS = _env_bool("MCP_STATELESS", False)
MCP_NOTIFY_INTERVAL_SECONDS = float(os.environ.get("MCP_NOTIFY_INTERVAL_SECONDS") or 1.0)
