from typing import Any

from django.core.management.base import CommandParser

from tenants.actions import issue_token
from tenants.management.base import TenantCommand
from tenants.models import Tenant


class Command(TenantCommand):
    help = "Issue an API token for a member; prints the token alone (it is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("user", help="username")
        parser.add_argument("--name", default="", help="a label for the token")
        parser.add_argument("--read-only", action="store_true", help="only read-only tools and GETs")
        parser.add_argument("--expires-days", type=int, default=None, help="expire after D days")
        parser.add_argument(
            "--apps", default="", help="comma-separated apps the token carries (default: every app)"
        )

    def handle_tenant(self, tenant: Tenant, **options: Any) -> None:
        _, raw = issue_token(
            tenant,
            options["user"],
            name=options["name"],
            read_only=options["read_only"],
            expires_days=options["expires_days"],
            apps=[name.strip() for name in options["apps"].split(",") if name.strip()],
            acting_user=None,
        )
        self.stdout.write(raw)
