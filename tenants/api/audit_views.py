"""The audit of what people changed in a tenant (members, tokens, settings, deploys, agents...):
pages and a JSON Lines export, in the tool-call audit's shape (``tenants.api.audit_feeds``)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from tenants.api.audit_feeds import AuditPages, JSONLinesRenderer, export_after, filtered, json_lines
from tenants.api.change_filters import ChangeFilter
from tenants.api.ocsf import change_activity
from tenants.api.views import TenantAPIView
from tenants.models import Tenant, TenantAuditLog

CHANGE_FILTERS = [
    OpenApiParameter(name, str, description=str(field.label or name))
    for name, field in ChangeFilter.base_filters.items()
]


class ChangeSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="acting_user.username", default=None)

    class Meta:
        model = TenantAuditLog
        fields = ["id", "created_at", "username", "action", "target", "old_value", "new_value"]


def change_rows(tenant: Tenant) -> QuerySet[TenantAuditLog]:
    return TenantAuditLog.objects.for_tenant(tenant).select_related("acting_user", "tenant")


class ChangeListView(TenantAPIView):
    @extend_schema(
        parameters=[*CHANGE_FILTERS, OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        responses=ChangeSerializer(many=True),
        description="What people changed in the tenant, newest first, a page a time.",
    )
    def get(self, request: Request, slug: str) -> Response:
        rows = filtered(ChangeFilter, request.query_params, change_rows(self.tenant))
        pages = AuditPages()
        page = pages.paginate_queryset(rows, request, view=self)
        return pages.get_paginated_response(ChangeSerializer(page, many=True).data)


class ChangeExportView(TenantAPIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        parameters=[
            *CHANGE_FILTERS,
            OpenApiParameter("after", str, description="the last line's metadata.uid"),
        ],
        responses={(200, "application/jsonl"): str},
        description="The changes as JSON Lines, oldest first, one OCSF API Activity event a line.",
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        after = export_after(request.query_params)
        rows = filtered(ChangeFilter, request.query_params, change_rows(self.tenant))
        return json_lines(rows, change_activity, after=after)
