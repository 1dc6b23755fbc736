"""A tool-call audit row as an OCSF API Activity event (class 6003), the export's line schema.

The envelope is ``tenants.api.ocsf``'s (shared with the audit of changes). The platform's own
fields that OCSF has no attribute for (wire name, app and version, outcome, arguments hash, agent,
run, error id) go in ``unmapped``. Arguments are never in a line: only their SHA-256.
"""

from __future__ import annotations

from typing import Any

from mcp_gateway.models import ToolCallAudit
from tenants.api.ocsf import (
    FAILURE,
    INFORMATIONAL,
    LOW,
    MEDIUM,
    OTHER,
    READ,
    STATUS_OTHER,
    SUCCESS,
    api_activity_event,
)

Outcome = ToolCallAudit.Outcome
_SUCCEEDED = {Outcome.OK, Outcome.CONFIRMED}
_PENDING = {Outcome.TASK_CREATED, Outcome.INPUT_REQUIRED}
_READS = {"resources/read", "prompts/get"}


def _status(outcome: str) -> tuple[int, str, int]:
    """OCSF status_id, status and severity_id of an outcome."""
    if outcome in _SUCCEEDED:
        return SUCCESS, "Success", INFORMATIONAL
    if outcome in _PENDING:
        return STATUS_OTHER, "Other", INFORMATIONAL
    return FAILURE, "Failure", MEDIUM if outcome == Outcome.DENIED else LOW


def api_activity(row: ToolCallAudit) -> dict[str, Any]:
    """One export line (``row.user`` and ``row.token`` fetched with it)."""
    activity = READ if row.method in _READS else OTHER
    status_id, status, severity_id = _status(row.outcome)
    user: dict[str, Any] = {}
    if row.user is not None:
        user = {"uid": str(row.user_id), "name": row.user.get_username()}
    if row.token is not None:
        user["credential_uid"] = row.token.key_id
    actor: dict[str, Any] = {"user": user}
    if row.oauth_client_id:
        actor["app_uid"] = row.oauth_client_id
    event = api_activity_event(
        uid=row.id,
        log_name="tool_calls",
        at=row.created_at,
        activity_id=activity,
        activity_name="Read" if activity == READ else row.method,
    )
    if row.trace_id:
        event["metadata"]["correlation_uid"] = row.trace_id
    event.update(
        duration=round(row.duration_ms),
        severity_id=severity_id,
        status_id=status_id,
        status=status,
        status_detail=row.outcome,
        actor=actor,
        api={"operation": row.method, "service": {"name": "mcp"}},
        resources=[{"name": row.wire_name, "type": "tool" if row.method == "tools/call" else row.method}],
        unmapped={
            "tenant": row.tenant.slug,
            "wire_name": row.wire_name,
            "app": row.app_name,
            "app_version": row.app_version,
            "outcome": row.outcome,
            "arguments_sha256": row.arguments_sha256,
            "agent": row.agent_name,
            "agent_run": row.agent_run_id,
            "error_id": row.error_id,
        },
    )
    return event
