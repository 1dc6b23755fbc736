"""toolDiscovery, a choice setting, through every edge: command, API, admin and console."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from tenants.models import Tenant, TenantAuditLog
from tests.tenants.test_admin import tenant_form_management

URL = "/api/tenants/acme/settings"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_command_sets_and_reads_a_mode_by_its_word(make_tenant):
    tenant = make_tenant("acme")
    assert run("tenant_setting", "acme", "toolDiscovery") == "toolDiscovery list\n"
    assert run("tenant_setting", "acme", "toolDiscovery", "search") == "toolDiscovery search\n"
    tenant.refresh_from_db()
    assert tenant.setting("toolDiscovery") == "search"
    row = TenantAuditLog.objects.for_tenant(tenant).filter(action="setting.set").get()
    assert (row.old_value, row.new_value) == ("list", "search")


@pytest.mark.parametrize("value", ["Search", "lists", "true", "1", ""])
def test_the_command_refuses_other_words(make_tenant, value):
    tenant = make_tenant("acme")
    with pytest.raises(CommandError, match="use one of list, search"):
        run("tenant_setting", "acme", "toolDiscovery", value)
    tenant.refresh_from_db()
    assert tenant.settings == {}


@pytest.mark.parametrize(("value", "status"), [("search", 200), ("SEARCH", 400), (True, 400), (None, 400)])
def test_the_api_takes_only_the_exact_words(api_client, acme, make_token, value, status):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = api_client.patch(URL, {"toolDiscovery": value}, format="json")
    assert response.status_code == status
    acme.refresh_from_db()
    assert acme.setting("toolDiscovery") == ("search" if status == 200 else "list")


def test_the_admin_form_takes_a_mode_and_an_empty_choice_keeps_the_value(client, make_tenant):
    client.force_login(get_user_model().objects.create_superuser("boss", password=None))
    tenant = make_tenant("acme")
    form = {"name": "Acme", "setting_mcpServer": "on", "setting_customAppsMcpTools": "on"}
    change = f"/admin/tenants/tenant/{tenant.pk}/change/"
    form_data = {**form, **tenant_form_management()}
    assert client.post(change, {**form_data, "setting_toolDiscovery": "search"}).status_code == 302
    assert Tenant.objects.get(pk=tenant.pk).setting("toolDiscovery") == "search"
    assert client.post(change, {**form_data, "setting_toolDiscovery": ""}).status_code == 302
    assert Tenant.objects.get(pk=tenant.pk).setting("toolDiscovery") == "search"
