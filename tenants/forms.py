"""Admin forms: one boolean field per tenant setting."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.models import ApiToken, Membership, Tenant
from tenants.tenant_settings import SETTINGS


class TenantAdminForm(forms.ModelForm):
    class Meta:
        model = Tenant
        fields = ["slug", "name", "mcp_prefix"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        current = self.instance.get_settings() if self.instance.pk else {}
        for key, spec in SETTINGS.items():
            self.fields[f"setting_{key}"] = forms.BooleanField(
                label=key, required=False, initial=current.get(key, spec.default), help_text=spec.help
            )

    def setting_values(self) -> dict[str, bool]:
        return {key: self.cleaned_data[f"setting_{key}"] for key in SETTINGS}


class TokenAddForm(forms.ModelForm):
    expires_days = forms.IntegerField(required=False, min_value=1, help_text="Leave empty for no expiry.")

    class Meta:
        model = ApiToken
        fields = ["tenant", "user", "name", "read_only"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        tenant, user = data.get("tenant"), data.get("user")
        if tenant and user and not user.is_superuser:
            if not Membership.objects.for_tenant(tenant).filter(user=user).exists():
                raise forms.ValidationError(f"{user} is not a member of {tenant}")
        return data
