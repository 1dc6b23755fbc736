"""Authorization codes (hashed) and connections: one user's consent for one client in one tenant.

Clients and tokens are django-oauth-toolkit's models (tokens stored only as SHA-256 checksums,
RFC 9700 token storage). The authorization code is ours (swapped in with
``OAUTH2_PROVIDER_GRANT_MODEL``) so that it is hashed at rest too, and carries the tenant and the
read-only choice from the consent page to the token endpoint.

A connection is the grant a user sees and revokes. It is born when its code is exchanged, and it
owns one refresh-token family: the toolkit rotates refresh tokens within a family and revokes the
whole family when a rotated one is replayed, so "revoke the connection" is "revoke its family".
"""

from __future__ import annotations

import hashlib
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from oauth2_provider.models import AbstractGrant
from oauth2_provider.settings import oauth2_settings

from tenants.models import Tenant, TenantOwned


class Digest(str):
    """A value read back from a hashed column: already a digest, never hashed again."""


class SHA256Field(models.CharField):
    """Stores the SHA-256 hex digest of what is assigned; lookups hash the value they compare.

    The toolkit creates and looks up codes by their raw value (``Grant.objects.get(code=code)``):
    hashing in the field keeps every one of those paths working while the database holds only
    digests, so a leaked table cannot be replayed.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs["max_length"] = 64
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("max_length", None)
        return name, path, args, kwargs

    def from_db_value(self, value, expression, connection):
        return None if value is None else Digest(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or isinstance(value, Digest):
            return value
        return hashlib.sha256(value.encode()).hexdigest()


class AuthorizationCode(AbstractGrant):
    """An authorization code: single use, short-lived, hashed; remembers what the user consented to."""

    code = SHA256Field(unique=True, verbose_name="code (SHA-256)")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    read_only = models.BooleanField(default=False)
    # The app scopes chosen on the consent page (``app:<name>``, ``app:<name>:read``); empty: every app.
    apps = models.JSONField(default=list, blank=True)
    # Set when the code is exchanged; the claimed code stays until it expires, to detect a replay.
    connection = models.ForeignKey(
        "oauth.Connection", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(AbstractGrant.Meta):
        swappable = "OAUTH2_PROVIDER_GRANT_MODEL"


class Connection(TenantOwned):
    """A client a user allowed into one tenant's MCP endpoint; acts as that user at call time."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="oauth_connections")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_connections"
    )
    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    read_only = models.BooleanField(default=False, help_text="Only readOnlyHint tools, as read-only tokens.")
    # The app scopes it carries (``app:<name>``, ``app:<name>:read``); empty: every app of its member.
    apps = models.JSONField(default=list, blank=True)
    token_family = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=60, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "user"])]
        ordering = ["tenant_id", "-created_at"]

    def __str__(self) -> str:
        return f"{self.application} for {self.user} @ {self.tenant}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def client_id(self) -> str:
        return self.application.client_id
