"""Tenant-scoped managers: the mechanism under every tenant-owned model.

Every tenant-owned model uses ``TenantScopedManager`` as its default manager. A queryset from it
raises ``ScopeError`` when it is evaluated without a tenant filter, so a forgotten filter fails
loudly in tests instead of returning another tenant's rows. Platform-wide code (admin, migrations,
maintenance) uses the explicit ``all_tenants`` manager.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.db import models

if TYPE_CHECKING:
    from tenants.models import Tenant

_TENANT_KEYS = ("tenant", "tenant_id", "tenant__id", "tenant__slug", "tenant__in", "tenant_id__in")


class ScopeError(RuntimeError):
    """A query of tenant-owned rows ran without a tenant filter."""


class TenantScopedQuerySet(models.QuerySet):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tenant_scoped = False

    # _clone and _filter_or_exclude are QuerySet internals the stubs leave out: the one way to carry the
    # scope flag through every chained call.
    def _clone(self) -> TenantScopedQuerySet:
        clone = super()._clone()  # type: ignore[misc]
        clone._tenant_scoped = self._tenant_scoped
        return clone

    def _filter_or_exclude(self, negate: bool, args: Any, kwargs: Any) -> TenantScopedQuerySet:
        clone = super()._filter_or_exclude(negate, args, kwargs)  # type: ignore[misc]
        if not negate and any(key in _TENANT_KEYS for key in kwargs):
            clone._tenant_scoped = True
        return clone

    def for_tenant(self, tenant: Tenant | int) -> TenantScopedQuerySet:
        tenant_id = tenant if isinstance(tenant, int) else tenant.pk
        return self.filter(tenant_id=tenant_id)

    def _require_scope(self) -> None:
        if not self._tenant_scoped:
            raise ScopeError(
                f"{self.model.__name__} rows are tenant-owned: filter by tenant "
                "(objects.for_tenant(t)) or use all_tenants deliberately"
            )

    def _fetch_all(self) -> None:
        if self._result_cache is None:
            self._require_scope()
        super()._fetch_all()

    def iterator(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._require_scope()
        return super().iterator(*args, **kwargs)

    def count(self) -> int:
        if self._result_cache is None:
            self._require_scope()
        return super().count()

    def exists(self) -> bool:
        if self._result_cache is None:
            self._require_scope()
        return super().exists()

    def aggregate(self, *args: Any, **kwargs: Any) -> dict:
        self._require_scope()
        return super().aggregate(*args, **kwargs)

    def update(self, **kwargs: Any) -> int:
        self._require_scope()
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        self._require_scope()
        return super().delete()


class TenantScopedManager(models.Manager.from_queryset(TenantScopedQuerySet)):  # type: ignore[misc]
    """Default manager of tenant-owned models: use ``for_tenant`` before anything else."""
