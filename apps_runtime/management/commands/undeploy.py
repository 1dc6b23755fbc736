from typing import Any

from django.core.management.base import CommandError, CommandParser

from apps_runtime.deploy import undeploy_app
from apps_runtime.manifest import DeployRejected
from tenants.management.base import TenantCommand
from tenants.models import Tenant


class Command(TenantCommand):
    help = "Stop serving an app; its versions and records are kept for a later deploy."

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("app", help="the app's name")

    def handle_tenant(self, tenant: Tenant, **options: Any) -> None:
        try:
            undeploy_app(tenant, options["app"], acting_user=None)
        except DeployRejected as rejected:
            raise CommandError(rejected.problems[0].message) from rejected
        self.stdout.write(f"undeployed {options['app']}")
