"""Tenants, their members and API tokens."""

from __future__ import annotations

from typing import TypeVar

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Manager
from django.utils import timezone

from core.origin import SLUG_PATTERN
from tenants.managers import TenantScopedManager
from tenants.tenant_settings import SETTINGS, SettingValue, effective_settings

SLUG_RE = rf"^{SLUG_PATTERN}$"
PREFIX_RE = r"^[a-z][a-z0-9_]{0,19}$"
ROLE_RE = r"^[a-z][a-z0-9_]{0,39}$"

V = TypeVar("V")


class Tenant(models.Model):
    """An organisation: owns members, tokens, apps and records."""

    slug = models.CharField(max_length=40, unique=True, validators=[RegexValidator(SLUG_RE)])
    name = models.CharField(max_length=200)
    mcp_prefix = models.CharField(
        max_length=20, unique=True, validators=[RegexValidator(PREFIX_RE)], help_text="Starts MCP wire names."
    )
    settings = models.JSONField(default=dict, blank=True, help_text="Overrides of the tenant settings.")
    # Bumped by every change that can alter a caller's tool catalog, so every process (server
    # replicas, commands) sees a change on its next request without a restart.
    state_version = models.PositiveBigIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def state_key(self) -> tuple:
        """Identifies this tenant at this state: a key for per-process caches of derived data.

        The creation time guards against a reused primary key (a rolled-back test transaction).
        """
        return (self.pk, self.created_at.timestamp(), self.state_version)

    def get_settings(self) -> dict[str, SettingValue]:
        return effective_settings(self.settings)

    def setting(self, key: str) -> SettingValue:
        """One setting, stored or default (a call asks for several: no whole dict for each)."""
        return self.settings.get(key, SETTINGS[key].default) if key in SETTINGS else self.get_settings()[key]

    # Typed readers of one kind of setting each. A stored value passed its spec's ``clean``, so the
    # kind is known; a ``TypeError`` means a row was written around that rule.

    def switch(self, key: str) -> bool:
        """A switch setting (a JSON boolean)."""
        return _of_kind(key, self.setting(key), bool)

    def number(self, key: str) -> int:
        """An integer setting."""
        return _of_kind(key, self.setting(key), int)

    def choice(self, key: str) -> str:
        """A choice setting (one of its words)."""
        return _of_kind(key, self.setting(key), str)

    def rule_object(self, key: str) -> dict | None:
        """An object setting (``None`` when unset)."""
        value = self.setting(key)
        return None if value is None else _of_kind(key, value, dict)


def _of_kind(key: str, value: SettingValue, kind: type[V]) -> V:
    if not isinstance(value, kind):
        raise TypeError(f"tenant setting {key} holds {type(value).__name__}, not {kind.__name__}")
    return value


class TenantOwned(models.Model):
    """A row owned by one tenant, reached only through ``objects.for_tenant(t)``.

    ``all_tenants`` is the deliberate way around the scope, for platform-wide code (admin, jobs).
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")

    objects = TenantScopedManager()
    all_tenants = Manager()

    class Meta:
        abstract = True


class Membership(TenantOwned):
    """A user's membership in a tenant, with the roles apps check."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    roles = models.JSONField(default=list, blank=True)
    is_admin = models.BooleanField(
        default=False, help_text="May manage the tenant's settings, members, tokens."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="membership_unique_user")]
        ordering = ["tenant_id", "user_id"]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant}"


class ApiToken(TenantOwned):
    """A bearer token of one user in one tenant. Only a hash of its secret is stored."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="tokens")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    key_id = models.CharField(max_length=16, unique=True, help_text="Public part of the token.")
    secret_hash = models.CharField(max_length=64)
    read_only = models.BooleanField(default=False)
    # The apps this token carries (names); empty: every app its user may use.
    apps = models.JSONField(default=list, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["tenant", "user"])]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.name or self.key_id} ({self.user})"

    @property
    def is_active(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class TenantAuditLog(TenantOwned):
    """Who changed what in a tenant, with the old and new values."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="audit_log")
    acting_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    action = models.CharField(max_length=60)
    target = models.CharField(max_length=200, blank=True)
    old_value = models.JSONField(null=True, blank=True)
    new_value = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["tenant", "-created_at"])]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.action} {self.target}"
