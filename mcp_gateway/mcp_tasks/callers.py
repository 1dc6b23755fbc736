"""Who a task's run acts as: its creator as of now (``tenants.callers.caller_now``), through the
credential that created the task.

A run may start minutes after its ``tools/call`` (queued behind others, or after a restart). It acts
with the caller's rights at that moment, read afresh, and not at all once the credential is gone (a
revoked or expired token, a revoked OAuth connection, a user no longer active) or the creator is no
longer a member of the tenant.
"""

from __future__ import annotations

CREDENTIAL_GONE = (
    "The task did not run: the credential that created it was revoked or has expired, or its user "
    "is no longer active or no longer a member of the workspace"
)
