"""Apps, their versions, their tools' wire names, records and handler errors."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Manager
from django.utils import timezone

from tenants.managers import TenantScopedManager
from tenants.models import Tenant


class App(models.Model):
    """A deployed app of a tenant; ``active_version`` is what serves (None: undeployed)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="apps")
    name = models.CharField(max_length=40)
    active_version = models.ForeignKey(
        "AppVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="app_unique_name")]
        ordering = ["tenant_id", "name"]

    def __str__(self) -> str:
        return f"{self.tenant_id}/{self.name}"


class AppVersion(models.Model):
    """One deploy of an app: the manifest and the bundle's files, immutable once stored."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    manifest = models.JSONField()
    bundle = models.BinaryField(help_text="The bundle's files as a zip archive.")
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the bundle archive.")
    warnings = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["app", "number"], name="appversion_unique_number")]
        indexes = [models.Index(fields=["tenant", "app", "-number"])]
        ordering = ["app_id", "-number"]

    def __str__(self) -> str:
        return f"{self.app.name} v{self.number}"


class Tool(models.Model):
    """An MCP tool of an app's active version, holding its wire name in the tenant.

    Only active versions have rows, so the unique constraint on (tenant, wire_name) is what keeps
    two racing deploys from taking one name.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="tools")
    version = models.ForeignKey(AppVersion, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=40)
    wire_name = models.CharField(max_length=128)
    position = models.PositiveIntegerField(help_text="Order of the tool in its manifest.")
    route_key = models.CharField(max_length=300)
    # What the catalog needs, denormalised so listing a tenant's tools is one query.
    descriptor = models.JSONField()

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "wire_name"], name="tool_unique_wire_name")]
        indexes = [models.Index(fields=["tenant", "app", "position"])]
        ordering = ["tenant_id", "wire_name"]

    def __str__(self) -> str:
        return self.wire_name


class Record(models.Model):
    """One record of an app collection; data is validated against the collection's schema."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    app = models.ForeignKey(App, on_delete=models.CASCADE, related_name="records")
    collection = models.CharField(max_length=40)
    record_id = models.CharField(max_length=26)
    data = models.JSONField(default=dict)
    created_by = models.CharField(max_length=150, blank=True)
    updated_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "app", "collection", "record_id"], name="record_unique_id"
            )
        ]
        ordering = ["tenant_id", "app_id", "collection", "record_id"]

    def __str__(self) -> str:
        return f"{self.collection}/{self.record_id}"


class HandlerError(models.Model):
    """A failed handler run, kept under its error id for the tenant's admins."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    app = models.ForeignKey(App, null=True, on_delete=models.SET_NULL, related_name="+")
    version_number = models.PositiveIntegerField(null=True)
    error_id = models.CharField(max_length=40, unique=True)
    kind = models.CharField(max_length=40)
    route_key = models.CharField(max_length=300)
    caller = models.CharField(max_length=150, blank=True)
    trace = models.TextField(blank=True, help_text="Frames of the tenant's own files only.")
    logs = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"])]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return self.error_id
