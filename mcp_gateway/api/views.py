"""Audit API: a tenant's MCP tool calls, newest first, for tenant admins."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_gateway.models import ToolCallAudit
from tenants.api.views import TenantAPIView

MAX_ROWS = 500


class ToolCallAuditSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", default=None)

    class Meta:
        model = ToolCallAudit
        fields = [
            "created_at",
            "username",
            "token_id",
            "wire_name",
            "app_name",
            "app_version",
            "outcome",
            "duration_ms",
            "error_id",
            "arguments_sha256",
        ]


class ToolCallAuditView(TenantAPIView):
    @extend_schema(responses=ToolCallAuditSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        rows = ToolCallAudit.objects.for_tenant(self.tenant).select_related("user").order_by("-created_at")
        return Response(ToolCallAuditSerializer(rows[:MAX_ROWS], many=True).data)
