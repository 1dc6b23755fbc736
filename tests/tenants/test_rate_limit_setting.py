"""The tenant setting toolRateLimit: one rule (``rate_limit_rule``) via the action, API, command and admin."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tenants import actions
from tenants.exceptions import InvalidValue
from tenants.models import Tenant
from tests.tenants.test_admin import tenant_form_management

pytestmark = pytest.mark.django_db

LIMIT = {"calls": 30, "per": "minute", "scope": "tenant"}


def stored(tenant) -> object:
    return Tenant.objects.get(pk=tenant.pk).setting("toolRateLimit")


def test_a_limit_is_stored_and_null_clears_it(make_tenant):
    tenant = make_tenant()

    assert actions.set_tenant_setting(
        tenant, "toolRateLimit", {"calls": 5, "per": "second"}, acting_user=None
    ) == {
        "calls": 5,
        "per": "second",
    }
    actions.set_tenant_setting(tenant, "toolRateLimit", None, acting_user=None)

    assert stored(tenant) is None


@pytest.mark.parametrize(
    ("value", "told"),
    [
        (True, "must be an object"),
        ({"calls": 0, "per": "minute"}, "from 1 to"),
        ({"calls": 5, "per": "day"}, "per must be"),
        ({"calls": 5, "per": "minute", "scope": "app"}, "scope must be"),
    ],
)
def test_a_bad_limit_is_refused_with_the_manifests_message(make_tenant, value, told):
    tenant = make_tenant()

    with pytest.raises(InvalidValue, match=told):
        actions.set_tenant_setting(tenant, "toolRateLimit", value, acting_user=None)

    assert stored(tenant) is None


def test_the_command_sets_and_prints_json(make_tenant):
    tenant = make_tenant("acme")
    out = StringIO()

    call_command(
        "tenant_setting",
        "acme",
        "toolRateLimit",
        '{"calls": 30, "per": "minute", "scope": "tenant"}',
        stdout=out,
    )
    call_command("tenant_setting", "acme", "toolRateLimit", stdout=out)

    line = 'toolRateLimit {"calls": 30, "per": "minute", "scope": "tenant"}\n'
    assert out.getvalue() == line * 2
    assert stored(tenant) == LIMIT
    with pytest.raises(CommandError, match="per must be"):
        call_command("tenant_setting", "acme", "toolRateLimit", '{"calls": 3, "per": "week"}', stdout=out)


def test_the_api_patches_the_limit_and_refuses_a_bad_one(api_client, acme, make_token):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(acme, 'admin')[1]}")
    url = "/api/tenants/acme/settings"

    assert api_client.patch(url, {"toolRateLimit": LIMIT}, format="json").json()["toolRateLimit"] == LIMIT
    refused = api_client.patch(url, {"toolRateLimit": {"calls": "many", "per": "minute"}}, format="json")
    cleared = api_client.patch(url, {"toolRateLimit": None}, format="json")

    assert refused.status_code == 400 and "calls must be a whole number" in str(refused.json())
    assert cleared.status_code == 200 and stored(acme) is None


def test_the_admin_form_sets_the_limit(admin_client, make_tenant):
    tenant = make_tenant("acme")
    url = f"/admin/tenants/tenant/{tenant.pk}/change/"
    form = {
        "name": "Acme",
        "setting_mcpServer": "on",
        "setting_customAppsMcpTools": "on",
        **tenant_form_management(),
    }

    refused = admin_client.post(url, {**form, "setting_toolRateLimit": '{"calls": 1, "per": "day"}'})
    response = admin_client.post(
        url, {**form, "setting_toolRateLimit": '{"calls": 30, "per": "minute", "scope": "tenant"}'}
    )

    assert refused.status_code == 200 and "per must be" in str(refused.context["adminform"].form.errors)
    assert response.status_code == 302 and stored(tenant) == LIMIT
