"""Console forms: they parse and bound what a person types; the rules stay in the actions.

A value an action refuses (a bad role name, a non-member) comes back as that action's message on
the form (see ``add_action_error``), so the console and the API give the same answer.
"""

from __future__ import annotations

from django import forms

from apps_runtime.models import JobRun
from tenants.exceptions import InvalidValue, TenantError
from tenants.models import ApiToken, Membership
from tenants.roles import parse_roles
from tenants.tenant_settings import SETTINGS, parse_setting_text
from tenants.tokens import TOKEN_MAX_DAYS


def add_action_error(form: forms.Form, err: TenantError) -> None:
    """Show an action's refusal on the form, on the field it names when the form has that field."""
    field = getattr(err, "field", None)
    form.add_error(field if field in form.fields else None, str(err))


class SettingForm(forms.Form):
    """A setting and its new value as typed: ``true``/``false`` for a switch, digits for an integer, JSON
    (or ``null``) for an object."""

    key = forms.ChoiceField(choices=[(key, key) for key in SETTINGS])
    value = forms.CharField(max_length=1000)

    def clean(self) -> dict:
        data = super().clean()
        if "key" in data and "value" in data:
            try:
                data["value"] = parse_setting_text(data["key"], data["value"].strip())
            except InvalidValue as err:
                self.add_error("value", err.rule)
        return data


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    roles = forms.CharField(
        required=False, max_length=4000, help_text="Comma-separated, e.g. case_reader,case_writer"
    )
    admin = forms.BooleanField(required=False, label="Tenant admin")

    def role_list(self) -> list[str]:
        return parse_roles(self.cleaned_data["roles"])


class MemberUpdateForm(forms.Form):
    roles = forms.CharField(required=False, max_length=4000)
    admin = forms.BooleanField(required=False, label="Tenant admin")

    def role_list(self) -> list[str]:
        return parse_roles(self.cleaned_data["roles"])


class TokenIssueForm(forms.Form):
    username = forms.ChoiceField(label="Member")
    name = forms.CharField(required=False, max_length=100)
    read_only = forms.BooleanField(required=False, label="Read-only (only tools marked readOnlyHint)")
    apps = forms.CharField(
        required=False,
        max_length=2000,
        label="Apps",
        help_text="Comma-separated app names the token carries; empty: every app.",
    )
    expires_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=TOKEN_MAX_DAYS,
        label="Expires after (days)",
        help_text="Empty: never.",
    )

    def __init__(self, *args, members: list[Membership], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].choices = [(m.user.get_username(),) * 2 for m in members]


class PreviewForm(forms.Form):
    """Who to preview: a member, a set of roles, or a token; and whether read-only."""

    AS_CHOICES = [("member", "A member"), ("roles", "A set of roles"), ("token", "A token")]

    as_ = forms.ChoiceField(choices=AS_CHOICES, label="Preview as", widget=forms.RadioSelect)
    member = forms.ChoiceField(required=False)
    roles = forms.CharField(required=False, max_length=4000, help_text="Comma-separated; empty: no roles.")
    token = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)
    read_only = forms.BooleanField(
        required=False, label="Read-only (as a read-only token; a token's own setting wins)"
    )

    def __init__(self, *args, members: list[Membership], tokens: list[ApiToken], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["as_"].widget.attrs["class"] = "inline"
        self.fields["member"].choices = [("", "—")] + [(m.user.get_username(),) * 2 for m in members]
        self.fields["token"].choices = [("", "—")] + [
            (t.pk, f"{t.name or t.key_id} ({t.user.get_username()}{', read-only' if t.read_only else ''})")
            for t in tokens
        ]

    def add_prefix(self, field_name: str) -> str:
        # "as" is a Python keyword, so the field is as_; the query string says as=.
        return "as" if field_name == "as_" else super().add_prefix(field_name)

    def clean(self) -> dict:
        data = super().clean()
        needed = {"member": "member", "token": "token"}.get(data.get("as_"))
        if needed and not data.get(needed):
            self.add_error(needed, "Choose one.")
        return data


class RunFilterForm(forms.Form):
    app = forms.CharField(required=False, max_length=40)
    job = forms.CharField(required=False, max_length=40)
    status = forms.ChoiceField(required=False, choices=[("", "any")] + JobRun.Status.choices)


class AgentForm(forms.Form):
    """An agent as a tenant admin types it; ``agents.definitions.clean_definition`` is the rule."""

    name = forms.CharField(max_length=40, help_text="Lower case, e.g. triage")
    provider = forms.ChoiceField(choices=[], help_text="Endpoints the platform operator lists")
    model = forms.CharField(max_length=100, help_text="The provider's model name, e.g. gpt-4.1-mini")
    instructions = forms.CharField(
        required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 4})
    )
    tools = forms.CharField(
        required=False,
        max_length=10_000,
        help_text="Blank: every tool the caller may use. Or app:<app> and tool wire names, comma-separated",
    )
    run_as = forms.ChoiceField(
        choices=[("caller", "the member who starts the run"), ("service", "a service member")]
    )
    service_roles = forms.CharField(required=False, max_length=4000, help_text="Roles of the service member")
    runners = forms.CharField(
        required=False,
        max_length=4000,
        label="Who may run it",
        help_text="Blank: tenant admins for a service agent, every member otherwise. Or user, or role:a,b",
    )
    max_steps = forms.IntegerField(initial=10)
    max_tool_calls = forms.IntegerField(initial=20)
    max_tokens = forms.IntegerField(initial=50_000)
    max_seconds = forms.IntegerField(initial=120)

    def __init__(self, *args, providers: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = [(name, name) for name in providers]

    def definition(self) -> dict:
        data = dict(self.cleaned_data)
        data["tools"] = parse_roles(data["tools"]) or None  # the same list syntax as roles
        data["service_roles"] = parse_roles(data["service_roles"])
        data["runners"] = data["runners"].strip()
        return data


class ProviderKeyForm(forms.Form):
    provider = forms.CharField(max_length=40, widget=forms.HiddenInput)
    api_key = forms.CharField(max_length=1000, widget=forms.PasswordInput, label="API key")


class AgentMessageForm(forms.Form):
    input = forms.CharField(max_length=20_000, widget=forms.Textarea(attrs={"rows": 3}), label="Message")
