from __future__ import annotations

from rest_framework import serializers

from tenants.models import ApiToken, Membership
from tenants.tenant_settings import SETTINGS


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["username", "roles", "is_admin", "created_at"]
        read_only_fields = ["created_at"]


class MembershipWriteSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    roles = serializers.ListField(child=serializers.CharField(max_length=40), default=list)
    is_admin = serializers.BooleanField(default=False)


class MembershipUpdateSerializer(serializers.Serializer):
    roles = serializers.ListField(child=serializers.CharField(max_length=40), required=False)
    is_admin = serializers.BooleanField(required=False)


class ApiTokenSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "key_id",
            "name",
            "username",
            "read_only",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "created_at",
            "active",
        ]
        read_only_fields = fields


class ApiTokenCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    name = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
    read_only = serializers.BooleanField(default=False)
    expires_days = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)


class SettingsSerializer(serializers.Serializer):
    """The tenant settings; PATCH any subset. Unknown keys are refused."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            key: serializers.BooleanField(required=False, help_text=spec.help)
            for key, spec in SETTINGS.items()
        }

    def validate(self, attrs: dict) -> dict:
        unknown = set(self.initial_data) - set(self.fields)
        if unknown:
            raise serializers.ValidationError({key: "unknown setting" for key in sorted(unknown)})
        return attrs
