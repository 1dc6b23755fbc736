from typing import Any

from django.core.management.base import CommandParser

from tenants.actions import add_member
from tenants.management.base import TenantCommand
from tenants.models import Tenant
from tenants.roles import parse_roles


class Command(TenantCommand):
    help = "Add a user (created when missing) to a tenant, or set their roles and flags."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("user", help="username")
        parser.add_argument("--roles", default="", help="comma-separated role names")
        parser.add_argument("--admin", action="store_true", help="make the member a tenant admin")
        parser.add_argument("--superuser", action="store_true", help="make the user a platform superuser")

    def handle_tenant(self, tenant: Tenant, **options: Any) -> None:
        roles = parse_roles(options["roles"])
        membership = add_member(
            tenant,
            options["user"],
            roles=roles,
            admin=options["admin"],
            superuser=options["superuser"],
            acting_user=None,
        )
        roles_text = ",".join(membership.roles) or "-"
        self.stdout.write(
            f"{options['user']} in {tenant.slug}: roles {roles_text}, admin {membership.is_admin}"
        )
