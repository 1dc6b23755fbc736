"""System checks for the settings the MCP gateway reads: paging, polling, fair share, sessions, Redis."""

from __future__ import annotations

from typing import Any

import redis
from django.conf import settings
from django.core.checks import Error, register

from core.setting_bounds import group_errors
from mcp_gateway.conf import GROUPS


@register()
def check_gateway_settings(app_configs: Any, **kwargs: Any) -> list[Error]:
    errors = group_errors(GROUPS, "mcp_gateway.E001")
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
