"""A tool-call audit row as an OCSF API Activity event (class 6003), the export's line schema.

OCSF 1.3 (schema.ocsf.io/1.3.0/classes/api_activity). The platform's own fields that OCSF has no
attribute for (wire name, app and version, outcome, arguments hash, agent, run, error id) go in
``unmapped``, OCSF's place for them. ``src_endpoint`` (required by the class) is left out: the
platform does not record a caller's address. Arguments are never in a line: only their SHA-256.
"""

from __future__ import annotations

from typing import Any

from mcp_gateway.models import ToolCallAudit

OCSF_VERSION = "1.3.0"
API_ACTIVITY = 6003
APPLICATION_ACTIVITY = 6
READ, OTHER = 2, 99
SUCCESS, FAILURE, STATUS_OTHER = 1, 2, 99
INFORMATIONAL, LOW, MEDIUM = 1, 2, 3

Outcome = ToolCallAudit.Outcome
_SUCCEEDED = {Outcome.OK, Outcome.CONFIRMED}
_PENDING = {Outcome.TASK_CREATED, Outcome.INPUT_REQUIRED}
_READS = {"resources/read", "prompts/get"}


def product() -> dict[str, str]:
    return {"name": "lowcode-platform", "vendor_name": "lowcode-platform"}


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
    if row.user_id is not None:
        user = {"uid": str(row.user_id), "name": row.user.get_username()}
    if row.token_id is not None:
        user["credential_uid"] = row.token.key_id
    actor: dict[str, Any] = {"user": user}
    if row.oauth_client_id:
        actor["app_uid"] = row.oauth_client_id
    metadata: dict[str, Any] = {
        "version": OCSF_VERSION,
        "product": product(),
        "uid": str(row.id),
        "log_name": "tool_calls",
    }
    if row.trace_id:
        metadata["correlation_uid"] = row.trace_id
    return {
        "class_uid": API_ACTIVITY,
        "class_name": "API Activity",
        "category_uid": APPLICATION_ACTIVITY,
        "activity_id": activity,
        "activity_name": "Read" if activity == READ else row.method,
        "type_uid": API_ACTIVITY * 100 + activity,
        "time": int(row.created_at.timestamp() * 1000),
        "duration": round(row.duration_ms),
        "severity_id": severity_id,
        "status_id": status_id,
        "status": status,
        "status_detail": row.outcome,
        "metadata": metadata,
        "actor": actor,
        "api": {"operation": row.method, "service": {"name": "mcp"}},
        "resources": [{"name": row.wire_name, "type": "tool" if row.method == "tools/call" else row.method}],
        "cloud": {"provider": "lowcode-platform"},
        "unmapped": {
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
    }
