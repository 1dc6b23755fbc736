"""The base of every tenant command: resolves SLUG and turns domain errors into CommandError."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tenants.exceptions import TenantError
from tenants.models import Tenant
from tenants.scoping import access_tenant


class TenantCommand(BaseCommand):
    """A command whose first argument is a tenant slug."""

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the tenant's slug")

    def handle(self, *args: Any, **options: Any) -> str | None:
        try:
            tenant = access_tenant(options["slug"])
            return self.handle_tenant(tenant, **options)
        except TenantError as err:
            raise CommandError(str(err)) from err

    def handle_tenant(self, tenant: Tenant, **options: Any) -> str | None:
        raise NotImplementedError
