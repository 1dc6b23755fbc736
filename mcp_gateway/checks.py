"""System checks for the settings the MCP gateway reads: paging, polling, fair share, sessions, Redis."""

from __future__ import annotations

import redis
from django.conf import settings
from django.core.checks import Error, register

from apps_runtime.manifest.schema import TASK_TIMEOUT_MS_CEILING
from core.setting_bounds import Bound, bound_errors

BOUNDS = {
    "MCP_PAGE_SIZE": Bound(int, 1),
    "MCP_CATALOG_CACHE_SECONDS": Bound(int, 0),
    "MCP_NOTIFY_INTERVAL_SECONDS": Bound(float, 0.01),  # the poll loop must not spin
    "MCP_WORKER_THREADS": Bound(int, 1),
    "MCP_TENANT_SHARE": Bound(int, 1),
    "MCP_TENANT_QUEUE": Bound(int, 0),
    "MCP_TENANT_QUEUE_SECONDS": Bound(float, 0),
    "MCP_SESSIONS_PER_TOKEN": Bound(int, 1),
    "MCP_SESSIONS_PER_MEMBER": Bound(int, 1),
    "MCP_SESSIONS_PER_TENANT": Bound(int, 1),
    "MCP_SESSION_IDLE_SECONDS": Bound(float, 1),
    "MCP_LISTEN_STREAMS_PER_TOKEN": Bound(int, 1),
    "MCP_LISTEN_STREAMS_PER_MEMBER": Bound(int, 1),
    "MCP_LISTEN_STREAMS_PER_TENANT": Bound(int, 1),
    "MCP_LISTEN_STREAM_SECONDS": Bound(float, 1),
    "MCP_CONTENT_MAX_ITEMS": Bound(int, 1),
    "MCP_CONTENT_MAX_ITEM_BYTES": Bound(int, 1),
    "MCP_CONTENT_MAX_BYTES": Bound(int, 1),
    "TASK_MAX_TIMEOUT_MS": Bound(int, 100, TASK_TIMEOUT_MS_CEILING),
    "TASK_DEFAULT_TTL_MS": Bound(int, 1000),
    "TASK_MAX_TTL_MS": Bound(int, 1000),
    "TASK_POLL_INTERVAL_MS": Bound(int, 100),
    "TASK_MAX_ACTIVE_PER_CALLER": Bound(int, 1),
    "TASK_MAX_ACTIVE_PER_TENANT": Bound(int, 1),
    "TASK_MAX_ACTIVE_PER_MEMBER": Bound(int, 1),
    "TASK_MAX_QUEUED_PER_TENANT": Bound(int, 1),
    "TASK_QUEUE_SECONDS": Bound(int, 1),
    "TASK_TENANT_SHARE": Bound(int, 1),
    "TASK_RESULT_WAIT_SECONDS": Bound(float, 0),
    "TASK_MAX_RESULT_BYTES": Bound(int, 1024),
    "RETENTION_AUDIT_DAYS": Bound(float, 0.01),
    "RETENTION_AUDIT_ROWS_PER_TENANT": Bound(int, 1),
    "TASK_IN_PROCESS_WORKERS": Bound(int, 1),
    "TASK_RESEND_SECONDS": Bound(int, 0),
    "TASK_RUN_GRACE_SECONDS": Bound(int, 0),
}


@register()
def check_gateway_settings(app_configs, **kwargs) -> list[Error]:
    errors = bound_errors(BOUNDS, "mcp_gateway.E001")
    origins = settings.MCP_ALLOWED_ORIGINS
    if not isinstance(origins, list | tuple) or not all(isinstance(o, str) and o for o in origins):
        errors.append(
            Error(
                f"MCP_ALLOWED_ORIGINS={origins!r} must be a list of origins",
                hint="e.g. MCP_ALLOWED_ORIGINS=https://app.example,http://127.0.0.1:*",
                id="mcp_gateway.E002",
            )
        )
    errors += rate_limit_redis_errors()
    return errors


def rate_limit_redis_errors() -> list[Error]:
    # Caught here, not per call: a URL redis cannot parse would fail every rate-limited call.
    url = settings.RATE_LIMIT_REDIS_URL
    try:
        if url:
            redis.ConnectionPool.from_url(url)
    except ValueError as err:
        return [
            Error(
                f"RATE_LIMIT_REDIS_URL={url!r} is not a Redis URL: {err}",
                hint="e.g. redis://127.0.0.1:6379/1, or unset it to count in the database",
                id="mcp_gateway.E003",
            )
        ]
    return []
