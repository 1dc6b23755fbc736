from typing import Any

from django.core.management.base import CommandParser

from tenants.actions import set_tenant_setting
from tenants.management.base import TenantCommand
from tenants.models import Tenant
from tenants.tenant_settings import parse_setting_text, setting_spec, setting_text


class Command(TenantCommand):
    help = "Show all tenant settings, one setting, or set one (true or false, an integer, a word, or JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("key", nargs="?", help="a setting, e.g. customAppsMcpTools or maxOutputTokens")
        parser.add_argument(
            "value",
            nargs="?",
            help="true or false for a switch, an integer for a number, list or search for toolDiscovery, "
            'JSON such as {"calls": 60, "per": '
            '"minute"} or null for toolRateLimit',
        )

    def handle_tenant(self, tenant: Tenant, **options: Any) -> None:
        key, value = options["key"], options["value"]
        if key is None:
            for name, current in tenant.get_settings().items():
                self.stdout.write(f"{name} {setting_text(current)}")
            return
        setting_spec(key)
        if value is not None:
            set_tenant_setting(tenant, key, parse_setting_text(key, value), acting_user=None)
        self.stdout.write(f"{key} {setting_text(tenant.setting(key))}")
