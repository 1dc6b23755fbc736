from __future__ import annotations

from rest_framework import serializers

from tenants.actions import MAX_ROLES
from tenants.exceptions import InvalidValue
from tenants.models import ApiToken, Membership
from tenants.tenant_settings import SETTINGS, SettingSpec, SettingValue, clean_setting_value
from tenants.tokens import TOKEN_MAX_DAYS

# Fields a caller may think they can write but never can here, with the reason they are told.
_FIXED_FIELDS = {
    "superuser": "platform superusers are made by a platform operator, never through a tenant",
    "is_superuser": "platform superusers are made by a platform operator, never through a tenant",
    "slug": "fixed when the tenant is created",
    "mcp_prefix": "fixed when the tenant is created: wire names in use start with it",
}


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not declare, so a write that would be ignored is a 400 instead."""

    unknown_message = "unknown field"

    def validate(self, attrs: dict) -> dict:
        unknown = set(self.initial_data) - set(self.fields) if isinstance(self.initial_data, dict) else set()
        if unknown:
            raise serializers.ValidationError(
                {key: _FIXED_FIELDS.get(key, self.unknown_message) for key in sorted(unknown)}
            )
        return attrs


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["username", "roles", "is_admin", "created_at"]
        read_only_fields = ["created_at"]


class MembershipWriteSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    roles = serializers.ListField(
        child=serializers.CharField(max_length=40), max_length=MAX_ROLES, default=list
    )
    is_admin = serializers.BooleanField(default=False)


class MembershipUpdateSerializer(StrictSerializer):
    roles = serializers.ListField(
        child=serializers.CharField(max_length=40), max_length=MAX_ROLES, required=False
    )
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
            "apps",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "created_at",
            "active",
        ]
        read_only_fields = fields


class ApiTokenCreateSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    name = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
    read_only = serializers.BooleanField(default=False)
    expires_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=TOKEN_MAX_DAYS, default=None
    )
    apps = serializers.ListField(child=serializers.CharField(max_length=40), required=False, default=list)


class _SettingRule:
    """A tenant setting's value through the one rule, ``clean_setting_value``.

    DRF's own fields also take "yes", "on", 0 (booleans) or "5", 5.0 (integers), which the command refuses.
    """

    field_name: str  # the DRF field's, set when the serializer binds it

    def to_internal_value(self, data: object) -> SettingValue:
        try:
            return clean_setting_value(self.field_name, data)
        except InvalidValue as err:
            raise serializers.ValidationError(err.rule, code="invalid") from err


class SwitchSettingField(_SettingRule, serializers.BooleanField):
    """A switch: JSON true or false only."""


class IntegerSettingField(_SettingRule, serializers.IntegerField):
    """A bounded integer: a JSON integer in range only."""


class ChoiceSettingField(_SettingRule, serializers.ChoiceField):
    """One of the setting's words, exactly as written."""


class ObjectSettingField(_SettingRule, serializers.JSONField):
    """A JSON object checked by the setting's own rule, or null for none."""


def setting_field(spec: SettingSpec) -> serializers.Field:
    if spec.is_switch:
        return SwitchSettingField(required=False, help_text=spec.help)
    if spec.is_choice:
        return ChoiceSettingField(choices=list(spec.choices or ()), required=False, help_text=spec.help)
    if spec.is_object:
        return ObjectSettingField(required=False, allow_null=True, help_text=spec.help)
    return IntegerSettingField(
        required=False, help_text=spec.help, min_value=spec.minimum, max_value=spec.maximum
    )


class SettingsSerializer(StrictSerializer):
    """The tenant settings; PATCH any subset. Unknown keys are refused."""

    unknown_message = "unknown setting"

    def get_fields(self) -> dict[str, serializers.Field]:
        return {key: setting_field(spec) for key, spec in SETTINGS.items()}
