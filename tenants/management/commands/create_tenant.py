from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tenants.actions import create_tenant
from tenants.exceptions import TenantError


class Command(BaseCommand):
    help = "Create a tenant. The MCP prefix defaults to the slug with '-' as '_'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--prefix", help="MCP wire-name prefix, ^[a-z][a-z0-9_]{0,19}$")
        parser.add_argument("--name", help="display name (defaults to the slug)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            tenant = create_tenant(
                options["slug"], name=options["name"], prefix=options["prefix"], acting_user=None
            )
        except TenantError as err:
            raise CommandError(str(err)) from err
        self.stdout.write(f"created tenant {tenant.slug} (prefix {tenant.mcp_prefix})")
