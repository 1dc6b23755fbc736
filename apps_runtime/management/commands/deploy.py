from typing import Any

from django.core.management.base import CommandError, CommandParser

from apps_runtime.deploy import DeployResult, deploy_bundle, rollback_app
from apps_runtime.manifest import DeployRejected, read_bundle
from tenants.management.base import TenantCommand
from tenants.models import Tenant


class Command(TenantCommand):
    help = (
        "Deploy an app bundle (folder or .zip) into a tenant, or roll an app back. Prints each tool's "
        "wire name; when refused, prints one problem a line as '<JSON pointer>: <message>' and exits 1."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("path", nargs="?", help="bundle folder or .zip")
        parser.add_argument("--rollback", metavar="APP", help="switch APP back to its previous version")

    def handle_tenant(self, tenant: Tenant, **options: Any) -> None:
        if bool(options["path"]) == bool(options["rollback"]):
            raise CommandError("give either PATH or --rollback APP")
        try:
            if options["rollback"]:
                result = rollback_app(tenant, options["rollback"], acting_user=None)
            else:
                result = deploy_bundle(tenant, read_bundle(options["path"]), acting_user=None)
        except DeployRejected as rejected:
            for problem in rejected.problems:
                self.stdout.write(str(problem))
            for warning in rejected.warnings:
                self.stderr.write(f"warning: {warning}")
            count = len(rejected.problems)
            raise CommandError(f"deploy refused: {count} problem{'s' if count != 1 else ''}") from rejected
        self._report(result)

    def _report(self, result: DeployResult) -> None:
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        for _, wire in result.tools:
            self.stdout.write(wire)
        count = len(result.tools)
        tools = f"{count} tool{'s' * (count != 1)}"
        self.stderr.write(f"{result.app.name} v{result.version.number} is live ({tools})")
