"""The audit trail of MCP tool calls, and MCP tasks."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenants.models import ApiToken, TenantOwned

LINK_ORIGIN_MAX_LENGTH = 255  # ToolTask.link_origin: a longer origin is not kept


class ToolCallAudit(TenantOwned):
    """One row per tool call, resource read, prompt get or completion of an app route.

    ``method`` says which; ``wire_name`` is the tool's, resource's or prompt's wire name. Arguments
    (a read's URI included) are kept only as a hash: they may hold personal data.
    """

    class Outcome(models.TextChoices):
        OK = "ok"
        TOOL_ERROR = "tool_error"
        INVALID_ARGUMENTS = "invalid_arguments"
        HANDLER_FAILED = "handler_failed"
        DENIED = "denied"
        PLATFORM_ERROR = "platform_error"  # the platform failed, not the tool: see the error id in the logs
        CONFIRMED = "confirmed"  # the user accepted a confirmation and the route ran; its result was ok
        DECLINED = "declined"  # the user declined or cancelled a confirmation; nothing ran
        RATE_LIMITED = "rate_limited"  # over the tool's rate limit; nothing ran
        TASK_CREATED = "task_created"  # answered at once with a task; the run is audited when it ends
        INPUT_REQUIRED = "input_required"  # the handler asked its caller (request.ask); it runs again
        APPROVAL_REQUIRED = "approval_required"  # a confirm tool waits for an approval out of band

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    token = models.ForeignKey(ApiToken, null=True, on_delete=models.SET_NULL, related_name="+")
    # The OAuth client the call came through (a client ID, or its metadata document URL), if any.
    oauth_client_id = models.CharField(max_length=255, blank=True)
    method = models.CharField(max_length=40, default="tools/call")
    # The tenant agent, and its run, that made the call for the caller (blank: the caller's own call).
    agent_name = models.CharField(max_length=40, blank=True)
    agent_run_id = models.CharField(max_length=40, blank=True)
    wire_name = models.CharField(max_length=128)
    app_name = models.CharField(max_length=40, blank=True)
    app_version = models.PositiveIntegerField(null=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    duration_ms = models.FloatField()
    error_id = models.CharField(max_length=40, blank=True)
    arguments_sha256 = models.CharField(max_length=64)
    # The W3C trace id of the call (``traceparent`` in the request's ``_meta``), to find it in traces.
    trace_id = models.CharField(max_length=32, blank=True)
    # Code mode: a run_code call's own id, and on each inner call the id of the run_code call it
    # belongs to (its rows are written before their parent's, so the link is an id, not a key).
    call_id = models.CharField(max_length=40, blank=True)
    parent_call_id = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-created_at"]),
            models.Index(fields=["tenant", "parent_call_id"], name="mcp_audit_parent_call"),
        ]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.wire_name} {self.outcome}"


class RateLimitCounter(models.Model):
    """Calls counted in one fixed window of one rate limit, when no Redis is configured.

    ``window_key`` names the tenant, the tool, the caller or the whole tenant, and the window's
    start, so a row is only ever incremented; rows whose window has ended are purged.
    """

    window_key = models.CharField(max_length=200, primary_key=True)
    count = models.PositiveIntegerField()
    expires_at = models.BigIntegerField(db_index=True)  # Unix seconds: the window's end

    def __str__(self) -> str:
        return f"{self.window_key} {self.count}"


class ToolTask(TenantOwned):
    """An MCP task: a task-augmented tools/call whose route runs in the background.

    Owned by the tenant and by the credential that created it (``owner``): only that credential
    reads, lists or cancels it. Kept until ``expires_at`` (creation plus the TTL), then purged.
    A run is claimed by one conditional UPDATE (``started_at`` null to set), so it runs once.
    """

    class Status(models.TextChoices):
        WORKING = "working"
        INPUT_REQUIRED = "input_required"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    task_id = models.CharField(max_length=64, unique=True)
    owner = models.CharField(max_length=80)  # Caller.credential_key: "token:<id>", "grant:<id>", "user:<id>"
    caller = models.JSONField()  # the Caller at creation, without its tenant: the run acts as it
    member = models.CharField(max_length=200, blank=True)  # Caller.person_key: their share of the caps
    wire_name = models.CharField(max_length=128)
    arguments = models.JSONField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.WORKING)
    status_message = models.CharField(max_length=500, blank=True)
    result = models.JSONField(null=True, blank=True)  # the CallToolResult, as on the wire
    result_bytes = models.PositiveIntegerField(default=0)  # its size, against the storage quota
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)  # a run still going past it was lost
    ttl_ms = models.PositiveBigIntegerField()
    expires_at = models.DateTimeField()
    poll_interval_ms = models.PositiveIntegerField()
    # The creating call's origin, for the run's links.
    link_origin = models.CharField(max_length=LINK_ORIGIN_MAX_LENGTH, blank=True)
    # The tasks extension (2026-07-28): the kinds of question the creating client answers, the
    # questions a parked run waits on (``input_required``), the answers given so far (the run is
    # replayed with them), and how many rounds of questions the run has asked.
    can_ask = models.JSONField(default=list, blank=True)
    input_requests = models.JSONField(null=True, blank=True)
    answers = models.JSONField(default=dict, blank=True)
    input_rounds = models.PositiveSmallIntegerField(default=0)
    # Failed by the platform (run lost, never started, result not kept), not by the tool: the
    # extension reports it as ``failed`` with an error, a tool's own error as ``completed``.
    platform_failure = models.BooleanField(default=False)
    # A task-augmented call of a ``confirm`` tool from a client that cannot be asked: the approval
    # the task waits on (``input_required``) until a person decides it (``mcp_tasks.approval_waits``).
    approval = models.ForeignKey(
        "Approval", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "owner", "-created_at"]),
            models.Index(fields=["status", "started_at"]),
            models.Index(fields=["expires_at"]),
            # A member's share: their tasks waiting to start, and their kept results' bytes.
            models.Index(fields=["tenant", "member", "status"], name="tooltask_tenant_member"),
        ]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.task_id} {self.wire_name} {self.status}"

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({ToolTask.Status.COMPLETED, ToolTask.Status.FAILED, ToolTask.Status.CANCELLED})


class Approval(TenantOwned):
    """A person's decision that one call of a ``confirm`` tool may run once, asked out of band.

    The call it lets run is the same caller's (``credential_key``, the same credential), the same
    tool (``wire_name``) with the same arguments (``arguments_sha256``; the arguments themselves are
    not kept, only the confirmation question that shows them, bounded). Agents' held calls are
    approvals too (``agent_run_id``, ``agent_step``), and so are the approvals MCP tasks wait on
    (``ToolTask.approval``). ``closed``: its last answer (used, denied, expired) was given to the
    caller, so the same call asks anew; a task's or an agent run's approval is closed from the
    start (only that task or run goes ahead on it).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        DENIED = "denied"
        USED = "used"  # approved, and the call ran once

    public_id = models.CharField(max_length=40, unique=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.CASCADE, related_name="+"
    )
    credential_key = models.CharField(max_length=80)
    wire_name = models.CharField(max_length=128)
    app_name = models.CharField(max_length=40, blank=True)
    arguments_sha256 = models.CharField(max_length=64)
    question = models.TextField()
    # The tool's ``approvers`` auth expression when it was asked (blank: the caller; tenant admins).
    approvers = models.CharField(max_length=200, blank=True)
    agent_run_id = models.CharField(max_length=40, blank=True)
    agent_step = models.PositiveIntegerField(null=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True)
    used_at = models.DateTimeField(null=True)
    closed = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "credential_key", "wire_name", "arguments_sha256"]),
            models.Index(fields=["tenant", "status", "expires_at"]),
        ]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.public_id} {self.wire_name} {self.status}"
