"""Settings: the tenant's switches and numbers, what each does, and changing one (``tenants.actions``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from console.access import TenantPage, tenant_page
from console.forms import SettingForm, add_action_error
from console.pages import render_page
from tenants import actions
from tenants.exceptions import TenantError
from tenants.tenant_settings import SETTINGS, SettingValue, setting_text


def display_value(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    return "none" if value is None else setting_text(value)


def _settings_page(request: HttpRequest, page: TenantPage, *, form=None, status: int = 200) -> HttpResponse:
    values = page.tenant.get_settings()
    rows = [
        {"spec": SETTINGS[key], "on": value, "text": setting_text(value)} for key, value in values.items()
    ]
    context = {"rows": rows, "form": form}
    return render_page(request, page, "settings.html", context, current="console:settings", status=status)


@tenant_page(admin=True)
def settings_page(request: HttpRequest, page: TenantPage) -> HttpResponse:
    return _settings_page(request, page)


@require_POST
@tenant_page(admin=True)
def set_setting(request: HttpRequest, page: TenantPage) -> HttpResponse:
    form = SettingForm(request.POST)
    if form.is_valid():
        key, value = form.cleaned_data["key"], form.cleaned_data["value"]
        try:
            actions.set_tenant_setting(page.tenant, key, value, acting_user=request.user)
        except TenantError as err:
            add_action_error(form, err)
        else:
            messages.success(request, f"{key} is now {display_value(value)}.")
            return redirect("console:settings", slug=page.tenant.slug)
    return _settings_page(request, page, form=form, status=400)
