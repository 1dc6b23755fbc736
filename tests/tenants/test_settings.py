import pytest

from tenants import actions
from tenants.exceptions import InvalidValue, UnknownSetting
from tenants.models import TenantAuditLog

pytestmark = pytest.mark.django_db


def test_settings_default_to_on(make_tenant):
    assert make_tenant().get_settings() == {
        "agentRunsPerDay": 100,
        "agentTokensPerDay": 1000000,
        "codeMode": True,
        "confirmDestructiveTools": True,
        "customAppsMcpTools": True,
        "maxOutputTokens": 20000,
        "mcpServer": True,
        "toolDiscovery": "list",
        "toolRateLimit": None,
    }


def test_setting_a_value_is_stored_audited_and_bumps_the_version(make_tenant):
    tenant = make_tenant()
    version = tenant.state_version
    actions.set_tenant_setting(tenant, "customAppsMcpTools", False, acting_user=None)
    tenant.refresh_from_db()
    assert tenant.get_settings()["customAppsMcpTools"] is False
    assert tenant.state_version == version + 1
    log = TenantAuditLog.objects.for_tenant(tenant).filter(action="setting.set").get()
    assert (log.old_value, log.new_value) == (True, False)


def test_unknown_settings_and_values_are_refused(make_tenant):
    tenant = make_tenant()
    with pytest.raises(UnknownSetting):
        actions.set_tenant_setting(tenant, "mcpserver", False, acting_user=None)
    with pytest.raises(InvalidValue):
        actions.set_tenant_setting(tenant, "mcpServer", "yes", acting_user=None)
    for bad in (True, 99, 1_000_001, "500", 500.0):
        with pytest.raises(InvalidValue, match="use an integer from 100 to 1000000"):
            actions.set_tenant_setting(tenant, "maxOutputTokens", bad, acting_user=None)
    tenant.refresh_from_db()
    assert tenant.settings == {}
