"""Connections API: a tenant's OAuth connections; members see and revoke their own, admins all."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from oauth.connections import REASON_USER, access_connection, revoke_connection, visible_connections
from oauth.consent import describe_client
from oauth.exceptions import ConnectionNotFound
from oauth.models import Connection
from tenants.api.permissions import IsTenantMember
from tenants.api.views import TenantAPIView


class ConnectionSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    client_id = serializers.CharField(source="application.client_id", read_only=True)
    client_name = serializers.SerializerMethodField()
    client_registration = serializers.CharField(source="application.registration_source", read_only=True)
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = Connection
        fields = [
            "id",
            "username",
            "client_id",
            "client_name",
            "client_registration",
            "read_only",
            "apps",
            "created_at",
            "last_used_at",
            "revoked_at",
            "revoked_reason",
            "active",
        ]
        read_only_fields = fields

    def get_client_name(self, connection: Connection) -> str:
        return describe_client(connection.application).name


class ConnectionListView(TenantAPIView):
    permission_classes = [IsTenantMember]

    @extend_schema(responses=ConnectionSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        rows = visible_connections(self.tenant, request.user).order_by("-created_at")
        return Response(ConnectionSerializer(rows, many=True).data)


class ConnectionDetailView(TenantAPIView):
    permission_classes = [IsTenantMember]

    def connection(self, request: Request, connection_id: int) -> Connection:
        try:
            return access_connection(self.tenant, request.user, connection_id)
        except ConnectionNotFound as err:
            raise NotFound(str(err)) from err

    @extend_schema(responses=ConnectionSerializer)
    def get(self, request: Request, slug: str, connection_id: int) -> Response:
        return Response(ConnectionSerializer(self.connection(request, connection_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, connection_id: int) -> Response:
        connection = self.connection(request, connection_id)
        revoke_connection(connection, acting_user=request.user, reason=REASON_USER)
        return Response(status=status.HTTP_204_NO_CONTENT)
