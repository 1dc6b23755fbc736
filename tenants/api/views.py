"""Tenant API: settings, members and tokens, for tenant admins and superusers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import actions
from tenants.api.permissions import IsTenantAdmin
from tenants.api.serializers import (
    ApiTokenCreateSerializer,
    ApiTokenSerializer,
    MembershipSerializer,
    MembershipUpdateSerializer,
    MembershipWriteSerializer,
    SettingsSerializer,
)
from tenants.exceptions import TenantNotFound
from tenants.lookups import tenant_by_slug
from tenants.models import ApiToken, Membership, Tenant
from tenants.scoping import access_membership, access_token


class TenantAPIView(APIView):
    """A view under /api/tenants/<slug>/: resolves the tenant before the permission check."""

    permission_classes = [IsTenantAdmin]
    # The slug's tenant; None (a slug nobody has) only while the permission check runs.
    slug_tenant: Tenant | None = None

    @property
    def tenant(self) -> Tenant:
        """The URL's tenant: handlers run only after ``initial`` found it."""
        if self.slug_tenant is None:
            raise TenantNotFound(self.kwargs["slug"])
        return self.slug_tenant

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.slug_tenant = tenant_by_slug(kwargs["slug"])
        super().initial(request, *args, **kwargs)
        # Only superusers learn that a tenant does not exist; others were refused above.
        if self.slug_tenant is None:
            raise TenantNotFound(kwargs["slug"])


class TenantSettingsView(TenantAPIView):
    @extend_schema(responses=SettingsSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(self.tenant.get_settings())

    @extend_schema(request=SettingsSerializer, responses=SettingsSerializer)
    def patch(self, request: Request, slug: str) -> Response:
        serializer = SettingsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        for key, value in serializer.validated_data.items():
            actions.set_tenant_setting(self.tenant, key, value, acting_user=request.user)
        return Response(self.tenant.get_settings())


class MemberListView(TenantAPIView):
    @extend_schema(responses=MembershipSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        members = Membership.objects.for_tenant(self.tenant).select_related("user").order_by("user__username")
        return Response(MembershipSerializer(members, many=True).data)

    @extend_schema(request=MembershipWriteSerializer, responses={201: MembershipSerializer})
    def post(self, request: Request, slug: str) -> Response:
        serializer = MembershipWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        membership = actions.add_member(
            self.tenant,
            data["username"],
            roles=data["roles"],
            admin=data["is_admin"],
            acting_user=request.user,
        )
        return Response(MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)


class MemberDetailView(TenantAPIView):
    @extend_schema(responses=MembershipSerializer)
    def get(self, request: Request, slug: str, username: str) -> Response:
        return Response(MembershipSerializer(access_membership(self.tenant, username)).data)

    @extend_schema(request=MembershipUpdateSerializer, responses=MembershipSerializer)
    def patch(self, request: Request, slug: str, username: str) -> Response:
        access_membership(self.tenant, username)  # an unknown member is a 404 before a body error
        serializer = MembershipUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        membership = actions.update_member(
            self.tenant,
            username,
            roles=data.get("roles"),
            admin=data.get("is_admin"),
            acting_user=request.user,
        )
        return Response(MembershipSerializer(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, username: str) -> Response:
        actions.remove_member(self.tenant, username, acting_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenListView(TenantAPIView):
    @extend_schema(responses=ApiTokenSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        tokens = ApiToken.objects.for_tenant(self.tenant).select_related("user")
        return Response(ApiTokenSerializer(tokens, many=True).data)

    @extend_schema(
        request=ApiTokenCreateSerializer,
        responses={
            201: inline_serializer(
                "IssuedToken", {"token": serializers.CharField(), "details": ApiTokenSerializer()}
            )
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = ApiTokenCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        token, raw = actions.issue_token(
            self.tenant,
            data["username"],
            name=data["name"],
            read_only=data["read_only"],
            expires_days=data["expires_days"],
            apps=data["apps"],
            acting_user=request.user,
        )
        body = {"token": raw, "details": ApiTokenSerializer(token).data}
        return Response(body, status=status.HTTP_201_CREATED)


class TokenDetailView(TenantAPIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, token_id: int) -> Response:
        actions.revoke_token(access_token(self.tenant, token_id), acting_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
