"""Tenant secrets: set, list and delete them (tenant admins), and open them for an outbound request.

A value is sealed at rest (``core.sealing``) and opened only by ``values_for`` for the outbound client,
which puts it in a request and scrubs it from the answer; no surface returns it.
"""

from __future__ import annotations

import re

from django.db import transaction
from django.utils import timezone

from apps_runtime.models import App, TenantSecret
from core import sealing
from tenants.models import Tenant

NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
MAX_VALUE_CHARS = 8192
_SALT = b"lowcode-platform tenant secrets v1\x00"


class SecretInvalid(ValueError):
    """A name or value a secret may not have."""


def check(name: str, value: object = "") -> None:
    """Raises: SecretInvalid."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise SecretInvalid(f"a secret's name matches {NAME.pattern}, like API_TOKEN")
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS:
        raise SecretInvalid(f"a secret's value is a string of at most {MAX_VALUE_CHARS} characters")


@transaction.atomic
def set_secret(tenant: Tenant, name: str, value: str) -> TenantSecret:
    """Raises: SecretInvalid."""
    check(name, value)
    if not value:
        raise SecretInvalid("a secret's value is not empty (delete the secret instead)")
    secret, _ = TenantSecret.objects.for_tenant(tenant).update_or_create(
        tenant=tenant,
        name=name,
        defaults={"sealed": sealing.seal(_SALT, value), "updated_at": timezone.now()},
    )
    return secret


def delete_secret(tenant: Tenant, name: str) -> bool:
    deleted, _ = TenantSecret.objects.for_tenant(tenant).filter(name=name).delete()
    return bool(deleted)


def names_set(tenant_id: int) -> set[str]:
    return set(TenantSecret.objects.filter(tenant_id=tenant_id).values_list("name", flat=True))


def listing(tenant: Tenant) -> list[dict]:
    """Each secret's name, ``updated_at`` and the apps whose active version declares it; never a value."""
    declared: dict[str, list[str]] = {}
    apps = (
        App.objects.for_tenant(tenant).filter(active_version__isnull=False).select_related("active_version")
    )
    for app in apps.defer("active_version__bundle").order_by("name"):
        for name in app.active_version.manifest.get("secrets") or ():
            declared.setdefault(name, []).append(app.name)
    rows = TenantSecret.objects.for_tenant(tenant).order_by("name").values("name", "updated_at")
    return [{**row, "apps": declared.get(row["name"], [])} for row in rows]


def values_for(tenant_id: int, names: set[str]) -> dict[str, str | None]:
    """The values of ``names`` (None: not set, or sealed under a key that was rotated since)."""
    found = dict.fromkeys(names)
    for name, sealed in TenantSecret.objects.filter(tenant_id=tenant_id, name__in=names).values_list(
        "name", "sealed"
    ):
        try:
            found[name] = sealing.open_value(_SALT, sealed)
        except sealing.InvalidToken:
            found[name] = None
    return found
