"""Apps, their versions, their tools' wire names, records, handler errors, call logs, jobs and their runs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenants.models import Tenant, TenantOwned


class App(TenantOwned):
    """A deployed app of a tenant; ``active_version`` is what serves (None: undeployed)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="apps")
    name = models.CharField(max_length=40)
    active_version = models.ForeignKey(
        "AppVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="app_unique_name")]
        ordering = ["tenant_id", "name"]

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.name}"


class AppVersion(TenantOwned):
    """One deploy of an app: the manifest and the bundle's files, immutable once stored."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    manifest = models.JSONField()
    bundle = models.BinaryField(help_text="The bundle's files as a zip archive.")
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the bundle archive.")
    warnings = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app", "number"], name="appversion_unique_number")]
        indexes = [models.Index(fields=["tenant", "app", "-number"])]
        ordering = ["app_id", "-number"]

    def __str__(self) -> str:
        return f"{self.app.name} v{self.number}"


class Tool(TenantOwned):
    """An MCP tool of an app's active version, holding its wire name in the tenant.

    Only active versions have rows, so the unique constraint on (tenant, wire_name) is what keeps
    two racing deploys from taking one name.
    """

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="tools")
    version = models.ForeignKey(AppVersion, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=40)
    wire_name = models.CharField(max_length=128)
    position = models.PositiveIntegerField(help_text="Order of the tool in its manifest.")
    route_key = models.CharField(max_length=300)
    # What the catalog needs, denormalised so listing a tenant's tools is one query.
    descriptor = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "wire_name"], name="tool_unique_wire_name")]
        indexes = [models.Index(fields=["tenant", "app", "position"])]
        ordering = ["tenant_id", "wire_name"]

    def __str__(self) -> str:
        return self.wire_name


class Record(TenantOwned):
    """One record of an app collection; data is validated against the collection's schema."""

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="records")
    collection = models.CharField(max_length=40)
    record_id = models.CharField(max_length=26)
    data = models.JSONField(default=dict)
    size_bytes = models.PositiveIntegerField(
        default=0, help_text="Bytes of the data as compact UTF-8 JSON: what counts against the quotas."
    )
    created_by = models.CharField(max_length=150, blank=True)
    updated_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "app", "collection", "record_id"], name="record_unique_id"
            )
        ]
        # A recount of the tenant's usage sums sizes from this index alone (index-only on PostgreSQL).
        indexes = [models.Index(fields=["tenant", "size_bytes"], name="record_tenant_size")]
        ordering = ["tenant_id", "app_id", "collection", "record_id"]

    def __str__(self) -> str:
        return f"{self.collection}/{self.record_id}"


class RecordUsage(TenantOwned):
    """Bytes of a tenant's records, moved by each write so the quota check reads one row, not a sum.

    ``counted_at`` is when ``bytes`` was last summed from ``Record.size_bytes``; a refused write
    recounts when that is old, which repairs any drift (records deleted outside the records API).
    """

    bytes = models.BigIntegerField(default=0)
    counted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant"], name="recordusage_unique_tenant")]

    def __str__(self) -> str:
        return f"{self.tenant_id}: {self.bytes} bytes"


class HandlerError(TenantOwned):
    """A failed handler run, kept under its error id for the tenant's admins."""

    app = models.ForeignKey(App, null=True, on_delete=models.SET_NULL, related_name="+")
    version_number = models.PositiveIntegerField(null=True)
    error_id = models.CharField(max_length=40, unique=True)
    kind = models.CharField(max_length=40)
    route_key = models.CharField(max_length=300)
    caller = models.CharField(max_length=150, blank=True)
    member = models.CharField(
        max_length=200, blank=True, help_text="Caller.person_key of whose call failed: their share."
    )
    trace = models.TextField(blank=True, help_text="Frames of the tenant's own files only.")
    logs = models.TextField(blank=True)
    size_bytes = models.PositiveIntegerField(default=0, help_text="Trace and logs: the storage quota.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-created_at"]),
            # A member's share of the kept records is trimmed, and their bytes summed, by member.
            models.Index(fields=["tenant", "member"], name="handlererror_tenant_member"),
        ]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return self.error_id


class CallLog(TenantOwned):
    """What a successful handler run printed or logged, kept a short while for the tenant's admins
    (``lcp dev``, ``lcp logs``): a failed run's logs are in its ``HandlerError`` instead.

    Bounded (``retention.record_call_log``): the head of each run's logs up to RETENTION_CALL_LOG_BYTES,
    the newest RETENTION_CALL_LOGS_PER_APP of an app and RETENTION_CALL_LOGS_PER_TENANT of a tenant,
    none older than RETENTION_CALL_LOG_HOURS.
    """

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="+")
    version_number = models.PositiveIntegerField()
    route_key = models.CharField(max_length=300)
    caller = models.CharField(max_length=150, blank=True)
    status = models.PositiveSmallIntegerField(help_text="The HTTP status the handler answered.")
    logs = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-created_at"]),
            # The per-app cap is applied as each row is written, and lcp follows one app's rows by id.
            models.Index(fields=["app", "id"], name="calllog_app_id"),
        ]
        ordering = ["tenant_id", "id"]

    def __str__(self) -> str:
        return f"{self.app_id}/{self.pk}"


class Job(TenantOwned):
    """A scheduled job of an app's active version: what the dispatcher reads every minute.

    Like ``Tool``, only active versions have rows: a deploy, rollback or undeploy replaces them in its
    transaction, so the schedules change without restarting beat.
    """

    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="jobs")
    version = models.ForeignKey(AppVersion, on_delete=models.CASCADE, related_name="jobs")
    name = models.CharField(max_length=40)
    route_key = models.CharField(max_length=300)
    schedule = models.CharField(max_length=200, help_text="Five-field cron expression, in UTC.")
    run_as = models.CharField(max_length=1000, help_text="role: expression of the job's service principal.")
    active_since = models.DateTimeField(
        default=timezone.now, help_text="When this version started serving; earlier minutes never fire."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app", "name"], name="job_unique_name")]
        ordering = ["tenant_id", "app_id", "name"]

    def __str__(self) -> str:
        return f"{self.app_id}/{self.name}"


class JobRun(TenantOwned):
    """One run of an internal route: a scheduled job's minute, or a handler's ``request.enqueue``.

    ``caller`` is the snapshot of who it runs as (the enqueuing caller, or the job's service
    principal). ``attempts`` doubles as a fencing token: only the attempt that claimed the run may
    record its outcome, so a run the reaper took back cannot be finished twice.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        TIMED_OUT = "timed_out"

    run_id = models.CharField(max_length=40, unique=True)
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="runs")
    version_number = models.PositiveIntegerField(help_text="The version that queued it, then the one run.")
    job = models.CharField(max_length=40, blank=True, help_text="Empty for runs queued by a handler.")
    route_key = models.CharField(max_length=300)
    caller = models.JSONField(help_text="Snapshot of the caller or service principal it runs as.")
    member = models.CharField(
        max_length=200, blank=True, help_text="Caller.person_key of who it runs as: their share of the caps."
    )
    body = models.JSONField(default=dict, blank=True, help_text="Dropped when the run ends.")
    body_bytes = models.PositiveIntegerField(default=0, help_text="Its size: against the storage quota.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    depth = models.PositiveSmallIntegerField(
        default=1, help_text="1 when queued by a request or a schedule; a run queued by a run is one deeper."
    )
    origin = models.CharField(
        max_length=40,
        blank=True,
        help_text="The first run queued by the handler call a chain started from: its whole tree shares it.",
    )
    scheduled_for = models.DateTimeField(
        null=True, blank=True, help_text="The minute a scheduled run is for (None when enqueued)."
    )
    enqueued_at = models.DateTimeField(default=timezone.now)
    due_at = models.DateTimeField(default=timezone.now, help_text="When the next attempt may start.")
    started_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True, help_text="A running attempt is lost after this.")
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    result_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error_id = models.CharField(max_length=40, blank=True)
    error_code = models.CharField(max_length=40, blank=True)
    attempt_log = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            # Two dispatchers (two beats, or one late) may plan the same minute: one row wins.
            models.UniqueConstraint(
                fields=["app", "job", "scheduled_for"],
                condition=models.Q(scheduled_for__isnull=False),
                name="jobrun_once_per_minute",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "-enqueued_at"]),
            models.Index(fields=["status", "deadline"]),
            models.Index(fields=["status", "due_at"]),
            # The per-tenant cap counts unfinished runs.
            models.Index(fields=["tenant", "status"], name="jobrun_tenant_status"),
            # The per-call cap counts every run of one originating handler call.
            models.Index(fields=["tenant", "origin"], name="jobrun_tenant_origin"),
            # A member's share of the caps counts their runs of the last minute and their bodies' bytes.
            models.Index(fields=["tenant", "member", "enqueued_at"], name="jobrun_tenant_member"),
        ]
        ordering = ["tenant_id", "-enqueued_at"]

    def __str__(self) -> str:
        return self.run_id

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.TIMED_OUT)


class TenantSecret(TenantOwned):
    """A value a tenant's handlers send to other services (``request.secret``), sealed at rest.

    Never returned by any surface: the outbound client opens it to put it in a request (docs/egress.md).
    """

    name = models.CharField(max_length=64)
    sealed = models.TextField(help_text="Fernet token (core.sealing); never shown.")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="tenantsecret_unique_name")]
        ordering = ["tenant_id", "name"]

    def __str__(self) -> str:
        return self.name


class OutboundConnection(TenantOwned):
    """An account at an operator's OAuth provider: one member's own (``user``), whose calls carry it, or
    the tenant's service account (``user`` None), which only service principals' calls (jobs, agents
    running as ``service``) carry, connected by a tenant admin (``connected_by``)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    provider = models.CharField(max_length=64)
    access_sealed = models.TextField()
    refresh_sealed = models.TextField(blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    scopes = models.JSONField(default=list, blank=True)
    connected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    connected_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user", "provider"], name="outboundconnection_unique"),
            # NULLs are distinct in a unique index: the one service account per provider needs its own.
            models.UniqueConstraint(
                fields=["tenant", "provider"],
                condition=models.Q(user__isnull=True),
                name="outboundconnection_unique_service",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id or 'service'}@{self.provider}"


class OutboundRequest(TenantOwned):
    """One outbound request of a handler, made or refused: never bodies, headers or secrets."""

    app = models.ForeignKey(App, null=True, on_delete=models.SET_NULL, related_name="+")
    route_key = models.CharField(max_length=300, blank=True)
    caller = models.CharField(max_length=150, blank=True)
    trace_id = models.CharField(max_length=32, blank=True, help_text="The call's W3C trace id, if any.")
    method = models.CharField(max_length=10)
    scheme = models.CharField(max_length=5, blank=True)
    host = models.CharField(max_length=255, blank=True)
    port = models.PositiveIntegerField(null=True)
    path = models.CharField(max_length=500, blank=True)
    status = models.PositiveSmallIntegerField(null=True)
    outcome = models.CharField(max_length=20)  # ok, refused, failed
    refusal = models.CharField(max_length=300, blank=True)
    connection = models.CharField(max_length=64, blank=True, help_text="The app connection it carried.")
    # Whose account the connection's token was: the caller's own, or the tenant's service account.
    account = models.CharField(
        max_length=10, blank=True, choices=[("member", "member"), ("service", "service")]
    )
    bytes_sent = models.PositiveIntegerField(default=0)
    bytes_received = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"])]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.method} {self.host}{self.path} {self.outcome}"
