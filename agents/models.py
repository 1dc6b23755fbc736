"""Tenant agents, the provider keys they use, and their runs with each step."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from tenants.models import TenantOwned

AGENT_NAME_RE = r"^[a-z][a-z0-9_]{0,39}$"


class ProviderKey(TenantOwned):
    """A tenant's API key for one operator-listed provider, encrypted at rest (``keys.py``).

    The key is never shown again: only its provider and when it was set are readable.
    """

    provider = models.CharField(max_length=40)
    encrypted_key = models.TextField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "provider"], name="provider_key_unique")]
        ordering = ["tenant_id", "provider"]

    def __str__(self) -> str:
        return f"{self.provider} key"


class Agent(TenantOwned):
    """An agent of a tenant: instructions, a model, the tools it may use, its limits and who it runs as."""

    class RunAs(models.TextChoices):
        CALLER = "caller"  # the member who starts the run, with that member's roles
        SERVICE = "service"  # a service member of the tenant holding exactly ``service_roles``

    name = models.CharField(max_length=40, validators=[RegexValidator(AGENT_NAME_RE)])
    instructions = models.TextField(blank=True)
    provider = models.CharField(max_length=40)
    model = models.CharField(max_length=100)
    # None: every tool the caller may use; else selectors, "app:<name>" or a tool's wire name.
    tools = models.JSONField(null=True, blank=True)
    max_steps = models.PositiveIntegerField(default=10)
    max_tool_calls = models.PositiveIntegerField(default=20)
    max_tokens = models.PositiveIntegerField(default=50_000)
    max_seconds = models.PositiveIntegerField(default=120)
    run_as = models.CharField(max_length=10, choices=RunAs.choices, default=RunAs.CALLER)
    service_roles = models.JSONField(default=list, blank=True)
    # Who may run it and approve its held calls: an auth expression, 'user' or 'role:a,b'; blank is
    # the default for ``run_as`` (``agents.runners`` holds the rule).
    runners = models.CharField(max_length=4000, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="agent_unique_name")]
        ordering = ["tenant_id", "name"]

    def __str__(self) -> str:
        return self.name


class AgentRun(TenantOwned):
    """One run of an agent on one message: its state, its usage, and the model's message history.

    Claimed by one conditional UPDATE (queued to running), so a run executes once at a time. A run
    still ``running`` past its ``deadline`` was lost with its process and is failed by the sweep.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        AWAITING_APPROVAL = "awaiting_approval"  # paused until a person approves or denies a tool call
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    run_id = models.CharField(max_length=40, unique=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    input = models.TextField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    reason = models.CharField(max_length=500, blank=True)  # why it ended, when not completed
    error_id = models.CharField(max_length=40, blank=True)
    output = models.TextField(blank=True)
    messages = models.JSONField(default=list)  # the model's message history, to resume after an approval
    pending_calls = models.JSONField(default=list, blank=True)  # tool call ids the pause waits on
    usage = models.JSONField(default=dict)
    total_tokens = models.PositiveIntegerField(default=0)
    elapsed_seconds = models.FloatField(default=0)  # execution time so far (waiting for approval excluded)
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-created_at"]),
            models.Index(fields=["status", "deadline"]),
        ]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.run_id} {self.status}"

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


FINISHED = frozenset({AgentRun.Status.COMPLETED, AgentRun.Status.FAILED, AgentRun.Status.CANCELLED})


class AgentRunStep(models.Model):
    """A step of a run: a model turn (text, tokens) or a tool call (wire name, outcome, duration)."""

    class Kind(models.TextChoices):
        MODEL = "model"
        TOOL = "tool"

    class Approval(models.TextChoices):
        NONE = ""
        PENDING = "pending"
        APPROVED = "approved"
        DENIED = "denied"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    wire_name = models.CharField(max_length=128, blank=True)
    tool_call_id = models.CharField(max_length=100, blank=True)
    arguments = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=30, blank=True)  # a tool call's audit outcome
    text = models.TextField(blank=True)  # the model's text, or the question put to the approver
    duration_ms = models.FloatField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    approval = models.CharField(max_length=10, choices=Approval.choices, blank=True, default="")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="agent_step_unique_index")]
        ordering = ["run_id", "index"]

    def __str__(self) -> str:
        return f"{self.index} {self.kind} {self.wire_name}"
