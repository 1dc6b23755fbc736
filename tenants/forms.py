"""Admin forms. They check input the way the actions will, so a bad value is a form error, not a 500.

The writes themselves are the actions' (see ``tenants.admin``); a form only validates.
"""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from tenants.actions import clean_roles
from tenants.authority import token_holder
from tenants.exceptions import TenantError
from tenants.models import ApiToken, Membership, Tenant
from tenants.roles import parse_roles
from tenants.tenant_settings import SETTINGS, SettingValue, parse_setting_text, setting_text
from tenants.tokens import TOKEN_MAX_DAYS


def setting_words(key: str) -> str:
    """``mcpServer`` -> ``MCP server``: a setting's key in words (the admin shows headings in capitals)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).lower().split()
    text = " ".join(word.upper() if word in {"mcp", "api", "url"} else word for word in words)
    return text[:1].upper() + text[1:]


def setting_label(key: str) -> str:
    """``MCP server (mcpServer)``: words to read, and the key the API and commands take."""
    return f"{setting_words(key)} ({key})"


class RolesField(forms.CharField):
    """Role names as one line of text (``case_reader, case_writer``), not the JSON list they are stored as."""

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]  # a list is the point
        return parse_roles(super().to_python(value))


class TenantAdminForm(forms.ModelForm):
    class Meta:
        model = Tenant
        fields = ["slug", "name", "mcp_prefix"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        current = self.instance.get_settings() if self.instance.pk else {}
        for key, spec in SETTINGS.items():
            initial = current.get(key, spec.default)
            field: forms.Field
            if spec.is_switch:
                field = forms.BooleanField(
                    label=setting_label(key), required=False, initial=initial, help_text=spec.help
                )
            elif spec.is_choice:
                # Left empty: unchanged.
                field = forms.ChoiceField(
                    label=setting_label(key),
                    required=False,
                    choices=[("", "---------"), *((c, c) for c in spec.choices or ())],
                    initial=initial,
                    help_text=spec.help,
                )
            elif spec.is_object:
                # JSON text; left empty: none.
                field = forms.CharField(
                    label=setting_label(key),
                    required=False,
                    initial=setting_text(initial),
                    help_text=spec.help,
                )
            else:
                # Left empty: unchanged.
                field = forms.IntegerField(
                    label=setting_label(key),
                    required=False,
                    initial=initial,
                    help_text=spec.help,
                    min_value=spec.minimum,
                    max_value=spec.maximum,
                )
            self.fields[f"setting_{key}"] = field

    def clean(self) -> dict[str, Any]:
        data = cast(dict[str, Any], super().clean())  # ModelForm.clean returns cleaned_data
        for key, spec in SETTINGS.items():
            name = f"setting_{key}"
            if spec.is_object and name in data:
                try:
                    data[name] = parse_setting_text(key, data[name].strip() or "null")
                except TenantError as err:
                    self.add_error(name, str(err))
        return data

    def setting_values(self) -> dict[str, SettingValue]:
        values = {key: self.cleaned_data[f"setting_{key}"] for key in SETTINGS}
        return {
            key: value
            for key, value in values.items()
            if value not in (None, "") or (value is None and SETTINGS[key].is_object)
        }


class MembershipAdminForm(forms.ModelForm):
    """A membership on its own page or as a row of the tenant page.

    Who the membership belongs to is fixed once it exists: another user is another membership
    (remove this one, which revokes its tokens, and add one).
    """

    roles = RolesField(required=False, help_text="Role names, separated by commas or spaces.")

    class Meta:
        model = Membership
        fields = ["tenant", "user", "roles", "is_admin"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            for name in ("tenant", "user"):
                if name in self.fields:
                    self.fields[name].disabled = True

    def clean_roles(self) -> list[str]:
        roles = self.cleaned_data.get("roles")
        try:
            return clean_roles([] if roles is None else roles)
        except TenantError as err:
            raise forms.ValidationError(str(err)) from err


class TokenAddForm(forms.ModelForm):
    """A new token; the admin sets ``acting_user`` so the form asks the same rule the action will."""

    acting_user: AbstractBaseUser | None = None
    expires_days = forms.IntegerField(
        required=False, min_value=1, max_value=TOKEN_MAX_DAYS, help_text="Leave empty for no expiry."
    )

    class Meta:
        model = ApiToken
        fields = ["tenant", "user", "name", "read_only"]

    def clean(self) -> dict[str, Any]:
        data = cast(dict[str, Any], super().clean())  # ModelForm.clean returns cleaned_data
        tenant, user = data.get("tenant"), data.get("user")
        if tenant and user:
            try:
                token_holder(tenant, user.get_username(), acting_user=self.acting_user)
            except TenantError as err:
                raise forms.ValidationError(str(err)) from err
        return data
