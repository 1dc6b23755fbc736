"""The filters of the audit of what people changed: one FilterSet for the API, its export and the console."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import QuerySet

from tenants.models import TenantAuditLog

_PICKER = forms.DateTimeInput(attrs={"type": "datetime-local"})


class ChangeFilter(django_filters.FilterSet):
    """``action`` (``member.set``), ``area`` (its first part: ``member``, ``token``, ``setting``,
    ``agent``, ``app``...), ``member`` (who acted), ``target``, ``since``/``until``."""

    action = django_filters.CharFilter(max_length=60)
    area = django_filters.CharFilter(method="in_area", max_length=40, label="Area (member, token, app...)")
    member = django_filters.CharFilter(field_name="acting_user__username", max_length=150, label="Member")
    target = django_filters.CharFilter(max_length=200)
    since = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="gte", label="From (UTC)", widget=_PICKER
    )
    until = django_filters.IsoDateTimeFilter(
        field_name="created_at", lookup_expr="lte", label="To (UTC)", widget=_PICKER
    )

    class Meta:
        model = TenantAuditLog
        fields: list[str] = []

    def in_area(self, rows: QuerySet[TenantAuditLog], name: str, value: str) -> QuerySet[TenantAuditLog]:
        return rows.filter(action__startswith=f"{value}.")
