"""Gateway API for tenant admins: the audit of MCP tool calls (pages and export), and a preview of any
caller's tools/list."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_gateway.api.audit_filters import ToolCallFilter
from mcp_gateway.api.ocsf import api_activity
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call import approvals, preview
from tenants.api.audit_feeds import AuditPages, JSONLinesRenderer, export_after, filtered, json_lines
from tenants.api.permissions import IsTenantMember
from tenants.api.views import TenantAPIView
from tenants.callers import Caller
from tenants.models import Tenant
from tenants.roles import parse_roles

AUDIT_FILTERS = [
    OpenApiParameter(name, str, description=str(field.label or name))
    for name, field in ToolCallFilter.base_filters.items()
]


class ToolCallAuditSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", default=None)
    token = serializers.CharField(source="token.key_id", default=None, help_text="the token's public key id")
    agent = serializers.CharField(source="agent_name")
    agent_run = serializers.CharField(source="agent_run_id")

    class Meta:
        model = ToolCallAudit
        fields = [
            "id",
            "created_at",
            "username",
            "token",
            "oauth_client_id",
            "agent",
            "agent_run",
            "method",
            "wire_name",
            "app_name",
            "app_version",
            "outcome",
            "duration_ms",
            "error_id",
            "arguments_sha256",
            "trace_id",
            "call_id",
            "parent_call_id",
        ]


def audit_rows(tenant: Tenant) -> QuerySet[ToolCallAudit]:
    return ToolCallAudit.objects.for_tenant(tenant).select_related("user", "token", "tenant")


class ToolCallAuditView(TenantAPIView):
    @extend_schema(
        parameters=[*AUDIT_FILTERS, OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        responses=ToolCallAuditSerializer(many=True),
        description="Tool calls, resource reads, prompt gets and completions, newest first, a page a time.",
    )
    def get(self, request: Request, slug: str) -> Response:
        rows = filtered(ToolCallFilter, request.query_params, audit_rows(self.tenant))
        pages = AuditPages()
        page = pages.paginate_queryset(rows, request, view=self)
        return pages.get_paginated_response(ToolCallAuditSerializer(page, many=True).data)


class ToolCallExportView(TenantAPIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        parameters=[
            *AUDIT_FILTERS,
            OpenApiParameter("after", str, description="the last line's metadata.uid"),
        ],
        responses={(200, "application/jsonl"): str},
        description="The audit as JSON Lines, oldest first, one OCSF API Activity event a line.",
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        after = export_after(request.query_params)
        rows = filtered(ToolCallFilter, request.query_params, audit_rows(self.tenant))
        return json_lines(rows, api_activity, after=after)


class ToolPreviewView(TenantAPIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("roles", str, description="comma-separated roles of a hypothetical member"),
            OpenApiParameter("member", str, description="the username of a member"),
            OpenApiParameter("read_only", bool, description="as a read-only token would (default false)"),
        ],
        responses=inline_serializer(
            "ToolPreview",
            {
                "tools": serializers.ListField(child=serializers.DictField()),
                "count": serializers.IntegerField(),
                "estimated_tokens": serializers.IntegerField(),
                "resources": serializers.DictField(),
                "resourceTemplates": serializers.DictField(),
                "prompts": serializers.DictField(),
            },
        ),
        description=(
            "The exact tools/list (every page, in wire form) a caller would get: a member with "
            "`roles`, or the member `member`. `estimated_tokens` is "
            f"{preview.ESTIMATE_RULE}. `resources`, `resourceTemplates` and `prompts` are the "
            "caller's other lists, each `{items, count, estimated_tokens}`."
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        caller = self._caller(request.query_params)
        body = preview.tools_list(self.tenant, caller).as_json()
        for key, listing in preview.extras(self.tenant, caller).items():
            body[key] = {
                "items": listing.tools,
                "count": listing.count,
                "estimated_tokens": listing.estimated_tokens,
            }
        return Response(body)

    def _caller(self, params: Mapping[str, str]) -> Caller:
        """The caller the query names (exactly one of ``roles`` and ``member``).

        Raises:
            ValidationError: neither or both given, or a bad read_only value.
            InvalidValue: a bad role name (400). NotAMember: no such member (404).
        """
        if ("roles" in params) == ("member" in params):
            raise ValidationError({"detail": ["give exactly one of roles=a,b and member=<username>"]})
        flag = params.get("read_only", "false").lower()
        if flag not in ("true", "false"):
            raise ValidationError({"read_only": ["true or false"]})
        read_only = flag == "true"
        if "member" in params:
            return preview.member_caller(self.tenant, params["member"], read_only=read_only)
        roles = parse_roles(params["roles"])
        return preview.role_caller(self.tenant, roles, read_only=read_only)


class DecisionSerializer(serializers.Serializer):
    approve = serializers.BooleanField()


class ApprovalListView(TenantAPIView):
    permission_classes = [IsTenantMember]

    @extend_schema(
        operation_id="tenants_approvals_list",
        responses=OpenApiResponse(description="Open approvals the member asked for or decides."),
    )
    def get(self, request: Request, slug: str) -> Response:
        rows = approvals.pending_for(self.tenant, request.user)
        return Response([approvals.approval_json(row) for row in rows])


class ApprovalView(TenantAPIView):
    """One approval: the member who asked, and whoever may decide it (the tool's ``approvers``,
    tenant admins); 404 for anyone else."""

    permission_classes = [IsTenantMember]

    @extend_schema(responses=OpenApiResponse(description="The approval."))
    def get(self, request: Request, slug: str, approval_id: str) -> Response:
        found = approvals.access_approval(self.tenant, approval_id, request.user)
        return Response(approvals.approval_json(found))

    @extend_schema(request=DecisionSerializer, responses=OpenApiResponse(description="The decided approval."))
    def post(self, request: Request, slug: str, approval_id: str) -> Response:
        serializer = DecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        approve = serializer.validated_data["approve"]
        decided = approvals.decide(self.tenant, approval_id, request.user, approve)
        return Response(approvals.approval_json(decided))
