"""MCP tasks waiting on a person's approval: a task-augmented call of a ``confirm`` tool from a
client that cannot be asked (``tools.call.approvals``) is created ``input_required`` on an approval
of its own, and stays so until the approval is decided or expires.

``settle`` reads the approval and moves the task on: approved, the approval is consumed and the
task ``resume``d in one transaction (so it runs once), and its run sent; denied or expired, the task
ends with the reason as its error result (audited ``declined``: nothing ran). It is called at once
on a decision (``decided``, the approvals' listener), when the caller polls (``calls._catch_up``),
and by the sweep (``settle_due``: approvals that expired, and decisions whose listener did not run).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from mcp_gateway.audit_log import record_call
from mcp_gateway.mcp_tasks import store as task_store
from mcp_gateway.mcp_tasks.queue import send_on_commit
from mcp_gateway.models import Approval, ToolCallAudit, ToolTask
from mcp_gateway.tools.call import approvals
from tenants.callers import Caller

Status = Approval.Status
SWEEP_BATCH = 1000


def waits_on_approval(task: ToolTask) -> bool:
    return task.status == ToolTask.Status.INPUT_REQUIRED and task.approval_id is not None


def settle(task: ToolTask) -> None:
    """Move ``task`` on as its approval says: run it (approved), end it (denied, expired) or leave
    it waiting (pending). A task not waiting on an approval is left alone."""
    if task.approval_id is None or not waits_on_approval(task):
        return
    approval = Approval.all_tenants.select_related("decided_by").filter(pk=task.approval_id).first()
    if approval is None or approval.status == Status.USED:
        return  # purged; or used, by this task's own resume (only its task may use it)
    now = timezone.now()
    live = approval.expires_at > now
    if approval.status == Status.PENDING and live:
        return
    if approval.status == Status.APPROVED and live:
        with transaction.atomic():
            if not approvals.consume(approval, now):
                return  # expired between the read and the update: the next settle refuses it
            if not task_store.resume(task):
                transaction.set_rollback(True)  # cancelled meanwhile: the approval stays unused
                return
        send_on_commit([task.task_id])
        return
    if task_store.refuse_waiting(task, approvals.refusal_text(task.wire_name, approval, now)):
        record_call(
            Caller.from_snapshot(task.tenant_id, task.caller),
            task.wire_name,
            task.arguments,
            outcome=ToolCallAudit.Outcome.DECLINED,
            duration_ms=0,
        )


def decided(approval: Approval) -> None:
    """The approvals' listener: the task waiting on ``approval`` (if any) moves on at once."""
    task = ToolTask.all_tenants.filter(approval=approval).first()
    if task is not None:
        settle(task)


def settle_due() -> int:
    """The sweep's part: settle the waiting tasks whose approval expired, or was decided without
    its listener having moved the task (a crash between the two); how many it looked at."""
    waiting = ToolTask.all_tenants.filter(status=ToolTask.Status.INPUT_REQUIRED, approval__isnull=False)
    due = waiting.filter(
        Q(approval__expires_at__lte=timezone.now()) | Q(approval__status__in=[Status.APPROVED, Status.DENIED])
    )
    tasks = list(due[:SWEEP_BATCH])
    for task in tasks:
        settle(task)
    return len(tasks)
