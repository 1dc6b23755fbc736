"""Writing the audit row of a tool call."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mcp_gateway.models import ToolCallAudit
from tenants.callers import Caller


def arguments_hash(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def record_call(
    caller: Caller,
    wire_name: str,
    arguments: Any,
    *,
    outcome: str,
    duration_ms: float,
    app_name: str = "",
    app_version: int | None = None,
    error_id: str = "",
) -> None:
    ToolCallAudit.objects.create(
        tenant_id=caller.tenant_id,
        user_id=caller.user_id,
        token_id=caller.token_id,
        oauth_client_id=caller.oauth_client_id or "",
        wire_name=wire_name,
        app_name=app_name,
        app_version=app_version,
        outcome=outcome,
        duration_ms=round(duration_ms, 3),
        error_id=error_id,
        arguments_sha256=arguments_hash(arguments),
    )
