"""OCSF API Activity (class 6003) events: the export lines of both audits.

OCSF 1.3 (schema.ocsf.io/1.3.0/classes/api_activity). What OCSF has no attribute for goes in
``unmapped``, OCSF's place for it. ``src_endpoint`` (required by the class) is left out: the
platform does not record a caller's address. This module maps the audit of what people changed
(``TenantAuditLog``); ``mcp_gateway.api.ocsf`` maps tool calls onto the same envelope.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tenants.models import TenantAuditLog

OCSF_VERSION = "1.3.0"
API_ACTIVITY = 6003
APPLICATION_ACTIVITY = 6
CREATE, READ, UPDATE, DELETE, OTHER = 1, 2, 3, 4, 99
ACTIVITY_NAMES = {CREATE: "Create", READ: "Read", UPDATE: "Update", DELETE: "Delete"}
SUCCESS, FAILURE, STATUS_OTHER = 1, 2, 99
INFORMATIONAL, LOW, MEDIUM = 1, 2, 3

# The verb of a change's action ("member.set" -> "set") to OCSF's activity.
_VERBS = {
    "create": CREATE,
    "issue": CREATE,
    "deploy": CREATE,
    "set": UPDATE,
    "update": UPDATE,
    "rename": UPDATE,
    "rollback": UPDATE,
    "remove": DELETE,
    "revoke": DELETE,
    "delete": DELETE,
    "undeploy": DELETE,
}


def api_activity_event(
    *, uid: int, log_name: str, at: datetime, activity_id: int, activity_name: str
) -> dict[str, Any]:
    """The fields every line has, whichever audit it comes from."""
    return {
        "class_uid": API_ACTIVITY,
        "class_name": "API Activity",
        "category_uid": APPLICATION_ACTIVITY,
        "activity_id": activity_id,
        "activity_name": activity_name,
        "type_uid": API_ACTIVITY * 100 + activity_id,
        "time": int(at.timestamp() * 1000),
        "metadata": {
            "version": OCSF_VERSION,
            "product": {"name": "lowcode-platform", "vendor_name": "lowcode-platform"},
            "uid": str(uid),
            "log_name": log_name,
        },
        "cloud": {"provider": "lowcode-platform"},
    }


def change_activity(row: TenantAuditLog) -> dict[str, Any]:
    """One line of the changes' export (``row.acting_user`` and ``row.tenant`` fetched with it)."""
    activity = _VERBS.get(row.action.rsplit(".", 1)[-1], OTHER)
    event = api_activity_event(
        uid=row.id,
        log_name="changes",
        at=row.created_at,
        activity_id=activity,
        activity_name=ACTIVITY_NAMES.get(activity, row.action),
    )
    user = {}
    if row.acting_user is not None:
        user = {"uid": str(row.acting_user_id), "name": row.acting_user.get_username()}
    event.update(
        severity_id=INFORMATIONAL,
        status_id=SUCCESS,
        status="Success",
        actor={"user": user},
        api={"operation": row.action, "service": {"name": "lowcode-platform"}},
        resources=[{"name": row.target, "type": row.action.rsplit(".", 1)[0]}],
        unmapped={
            "tenant": row.tenant.slug,
            "action": row.action,
            "target": row.target,
            "old_value": row.old_value,
            "new_value": row.new_value,
        },
    )
    return event
