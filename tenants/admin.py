"""Django admin: tenants with their settings, members, tokens (secret shown once), audit."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from tenants import actions
from tenants.forms import TenantAdminForm, TokenAddForm
from tenants.models import ApiToken, Membership, Tenant, TenantAuditLog
from tenants.tenant_settings import SETTINGS


class AllTenantsAdmin(admin.ModelAdmin):
    """Admin of a tenant-owned model: the platform admin sees every tenant deliberately."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return self.model.all_tenants.get_queryset()


def _setting_column(key: str):
    def column(obj: Tenant) -> bool:
        return obj.setting(key)

    column.short_description = key
    column.boolean = True
    return column


def _toggle_action(key: str, value: bool):
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        for tenant in queryset:
            actions.set_tenant_setting(tenant, key, value, acting_user=request.user)

    action.__name__ = f"set_{key}_{'on' if value else 'off'}"
    action.short_description = f"Switch {key} {'on' if value else 'off'}"
    return action


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ["user", "roles", "is_admin"]
    autocomplete_fields = ["user"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantAdminForm
    list_display = ["slug", "name", "mcp_prefix", *[_setting_column(k) for k in SETTINGS]]
    search_fields = ["slug", "name"]
    actions = [_toggle_action(key, value) for key in SETTINGS for value in (True, False)]
    readonly_fields = ["state_version", "created_at"]

    def save_model(self, request: HttpRequest, obj: Tenant, form: TenantAdminForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        for key, value in form.setting_values().items():
            if obj.setting(key) != value:
                actions.set_tenant_setting(obj, key, value, acting_user=request.user)


@admin.register(Membership)
class MembershipAdmin(AllTenantsAdmin):
    list_display = ["user", "tenant", "roles", "is_admin"]
    list_filter = ["tenant", "is_admin"]
    search_fields = ["user__username", "tenant__slug"]
    autocomplete_fields = ["user", "tenant"]

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        obj.roles = actions.clean_roles(obj.roles or [])
        super().save_model(request, obj, form, change)
        actions.bump_state_version(obj.tenant)


@admin.register(ApiToken)
class ApiTokenAdmin(AllTenantsAdmin):
    list_display = [
        "key_id",
        "name",
        "user",
        "tenant",
        "read_only",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["tenant", "read_only"]
    search_fields = ["key_id", "name", "user__username"]
    readonly_fields = ["key_id", "last_used_at", "revoked_at", "created_at", "expires_at"]
    exclude = ["secret_hash"]
    actions = ["revoke"]

    def get_form(self, request: HttpRequest, obj: ApiToken | None = None, **kwargs: Any):
        if obj is None:
            kwargs["form"] = TokenAddForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None):
        if obj is None:
            return []
        return [*self.readonly_fields, "tenant", "user", "read_only"]

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None):
        if obj is None:
            return ["tenant", "user", "name", "read_only", "expires_days"]
        return ["tenant", "user", "name", "key_id", "read_only", "expires_at", "last_used_at", "revoked_at"]

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = actions.issue_token(
            obj.tenant,
            obj.user.get_username(),
            name=obj.name,
            read_only=obj.read_only,
            expires_days=form.cleaned_data.get("expires_days"),
            acting_user=request.user,
        )
        obj.pk = token.pk
        messages.warning(request, f"Copy this token now, it is not shown again: {raw}")

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        for token in queryset.select_related("tenant"):
            actions.revoke_token(token, acting_user=request.user)


@admin.register(TenantAuditLog)
class TenantAuditLogAdmin(AllTenantsAdmin):
    list_display = ["created_at", "tenant", "acting_user", "action", "target", "old_value", "new_value"]
    list_filter = ["tenant", "action"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
