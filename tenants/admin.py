"""Django admin: tenants with their settings, members, tokens (secret shown once), audit.

Every write here goes through ``tenants.actions``, the same functions the API and the commands
call, so an admin edit is validated, audited, bumps the tenant's state and has the same side effects
(removing a member revokes their tokens). No admin page saves or deletes a row itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.contrib import admin, messages
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, BaseModelFormSet, ModelChoiceField, ModelForm
from django.http import HttpRequest

from tenants import actions
from tenants.forms import MembershipAdminForm, TenantAdminForm, TokenAddForm, setting_words
from tenants.models import ApiToken, Membership, Tenant, TenantAuditLog
from tenants.tenant_settings import SETTINGS, SettingValue


class PlatformOperatorAdmin(admin.ModelAdmin):
    """Only platform superusers: these pages span every tenant, so they are a platform tool.

    A staff user given model permissions would otherwise read every tenant's rows.
    """

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)


class AllTenantsAdmin(PlatformOperatorAdmin):
    """Admin of a tenant-owned model: the platform admin sees every tenant deliberately."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return self.model.all_tenants.get_queryset()


class ReadOnlyAdmin(AllTenantsAdmin):
    """Rows only the platform writes (deploys, audit, runs): the admin shows them and changes nothing."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _setting_column(key: str) -> Callable[[Tenant], Any]:
    @admin.display(description=setting_words(key), boolean=SETTINGS[key].is_switch)
    def column(obj: Tenant) -> SettingValue:
        return obj.setting(key)

    return column


def _toggle_action(key: str, value: bool) -> Callable[[admin.ModelAdmin, HttpRequest, QuerySet], None]:
    @admin.action(description=f"Switch {key} {'on' if value else 'off'}")
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        for tenant in queryset:
            actions.set_tenant_setting(tenant, key, value, acting_user=operator(request))

    action.__name__ = f"set_{key}_{'on' if value else 'off'}"
    return action


def operator(request: HttpRequest) -> AbstractBaseUser:
    """The signed-in platform superuser acting through these pages (every one requires one)."""
    user = request.user
    if not isinstance(user, AbstractBaseUser):
        raise PermissionDenied
    return user


def _adopt(obj: Any, saved: Any) -> None:
    """Make the admin's unsaved ``obj`` the row an action just created (the admin redirects to it)."""
    obj.pk = saved.pk
    for field in obj._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding, obj._state.db = False, saved._state.db


class MembershipRows(BaseInlineFormSet):
    """The member rows of one tenant's page; a posted row id only ever finds that tenant's rows."""

    def add_fields(self, form: ModelForm, index: int | None) -> None:
        super().add_fields(form, index)
        rows = cast(ModelChoiceField, form.fields["id"])
        rows.queryset = Membership.objects.filter(tenant_id=self.instance.pk)


class MembershipInline(admin.TabularInline):
    model = Membership
    form = MembershipAdminForm
    formset = MembershipRows
    extra = 0
    fields = ["user", "roles", "is_admin"]
    autocomplete_fields = ["user"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The formset narrows this to the tenant on the page.
        return Membership.all_tenants.get_queryset()


def _save_membership_rows(tenant: Tenant, formset: BaseModelFormSet, request: HttpRequest) -> None:
    """Apply the tenant page's member rows through the actions, and tell the admin's log what changed."""
    formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
    deleted = set(formset.deleted_forms)
    for form in formset.initial_forms:
        username = form.instance.user.get_username()
        if form in deleted:
            actions.remove_member(tenant, username, acting_user=operator(request))
            formset.deleted_objects.append(form.instance)
        elif form.has_changed():
            data = form.cleaned_data
            actions.update_member(
                tenant, username, roles=data["roles"], admin=data["is_admin"], acting_user=operator(request)
            )
            formset.changed_objects.append((form.instance, form.changed_data))
    for form in formset.extra_forms:
        if form in deleted or not form.has_changed():
            continue
        data = form.cleaned_data
        formset.new_objects.append(
            actions.add_member(
                tenant,
                data["user"].get_username(),
                roles=data["roles"],
                admin=data["is_admin"],
                acting_user=operator(request),
            )
        )


@admin.register(Tenant)
class TenantAdmin(PlatformOperatorAdmin):
    form = TenantAdminForm
    list_display = ["slug", "name", "mcp_prefix", *[_setting_column(k) for k in SETTINGS]]
    search_fields = ["slug", "name"]
    actions = [
        _toggle_action(key, value)
        for key, spec in SETTINGS.items()
        if spec.is_switch
        for value in (True, False)
    ]
    readonly_fields = ["state_version", "created_at"]
    inlines = [MembershipInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Tenant | None = None) -> list[str]:
        # Wire names handed to MCP clients and stored with every app's tools start with the prefix.
        if obj is None:
            return list(self.readonly_fields)
        return [*self.readonly_fields, "slug", "mcp_prefix"]

    def has_delete_permission(self, request: HttpRequest, obj: Tenant | None = None) -> bool:
        # No action deletes a tenant: the cascade would drop its apps, records, tokens and audit
        # with no record of who did it.
        return False

    def save_model(self, request: HttpRequest, obj: Tenant, form: TenantAdminForm, change: bool) -> None:
        if change:
            actions.rename_tenant(obj, form.cleaned_data["name"], acting_user=operator(request))
        else:
            created = actions.create_tenant(
                obj.slug, name=obj.name, prefix=obj.mcp_prefix, acting_user=operator(request)
            )
            _adopt(obj, created)
        for key, value in form.setting_values().items():
            if obj.setting(key) != value:
                actions.set_tenant_setting(obj, key, value, acting_user=operator(request))

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseModelFormSet, change: bool
    ) -> None:
        if formset.model is Membership:
            _save_membership_rows(form.instance, formset, request)
        else:
            super().save_formset(request, form, formset, change)


@admin.register(Membership)
class MembershipAdmin(AllTenantsAdmin):
    form = MembershipAdminForm
    list_display = ["user", "tenant", "roles", "is_admin"]
    list_filter = ["tenant", "is_admin"]
    search_fields = ["user__username", "tenant__slug"]
    autocomplete_fields = ["user", "tenant"]

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        data = form.cleaned_data
        username = obj.user.get_username()
        if change:
            actions.update_member(
                obj.tenant,
                username,
                roles=data["roles"],
                admin=data["is_admin"],
                acting_user=operator(request),
            )
            return
        saved = actions.add_member(
            obj.tenant, username, roles=data["roles"], admin=data["is_admin"], acting_user=operator(request)
        )
        _adopt(obj, saved)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        actions.remove_member(obj.tenant, obj.user.get_username(), acting_user=operator(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for membership in queryset.select_related("tenant", "user"):
            self.delete_model(request, membership)


@admin.register(ApiToken)
class ApiTokenAdmin(AllTenantsAdmin):
    """Tokens are issued and revoked here; nothing else about one changes, and none is deleted."""

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
    exclude = ["secret_hash"]
    actions = ["revoke"]

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        # Revoked rows stay: the MCP audit refers to them, and revoking is audited.
        return False

    def get_form(
        self, request: HttpRequest, obj: ApiToken | None = None, change: bool = False, **kwargs: Any
    ) -> type[ModelForm]:
        if obj is None:
            kwargs["form"] = type("TokenAddForm", (TokenAddForm,), {"acting_user": operator(request)})
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("tenant", "user", "name", "read_only", "expires_days")
        return ("tenant", "user", "name", "key_id", "read_only", "expires_at", "last_used_at", "revoked_at")

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        token, raw = actions.issue_token(
            obj.tenant,
            obj.user.get_username(),
            name=obj.name,
            read_only=obj.read_only,
            expires_days=form.cleaned_data.get("expires_days"),
            acting_user=operator(request),
        )
        _adopt(obj, token)
        messages.warning(request, f"Copy this token now, it is not shown again: {raw}")

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        for token in queryset.select_related("tenant"):
            actions.revoke_token(token, acting_user=operator(request))


@admin.register(TenantAuditLog)
class TenantAuditLogAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "tenant", "acting_user", "action", "target", "old_value", "new_value"]
    list_filter = ["tenant", "action"]
