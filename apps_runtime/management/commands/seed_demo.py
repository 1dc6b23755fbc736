import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps_runtime.compiled import compiled_version
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from apps_runtime.models import App, Record
from apps_runtime.records import RecordsScope, create_record
from tenants import actions
from tenants.callers import caller_for
from tenants.models import Tenant
from tenants.scoping import access_user

FIXTURES = Path(settings.BASE_DIR) / "fixtures"


class Command(BaseCommand):
    help = "Create (or refresh) the demo tenant from fixtures/, deploy its apps, print a token per user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-tokens", action="store_true", help="do not issue tokens")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="where the demo is served")

    def handle(self, *args: Any, **options: Any) -> None:
        spec = json.loads((FIXTURES / "demo_tenant.json").read_text())
        tenant = Tenant.objects.filter(slug=spec["slug"]).first() or actions.create_tenant(
            spec["slug"], name=spec["name"], acting_user=None
        )
        for member in spec["members"]:
            actions.add_member(
                tenant,
                member["username"],
                roles=member["roles"],
                admin=member.get("admin", False),
                superuser=member.get("superuser", False),
                acting_user=None,
            )
        for app_name in spec["apps"]:
            result = deploy_bundle(tenant, read_bundle(FIXTURES / "apps" / app_name), acting_user=None)
            self.stdout.write(f"deployed {app_name} v{result.version.number}: {len(result.tools)} tools")
        self._seed_records(tenant, spec.get("records", {}))
        if not options["no_tokens"]:
            self._print_tokens(tenant, spec["members"], options["base_url"].rstrip("/"))

    def _seed_records(self, tenant: Tenant, records: dict) -> None:
        admin = access_user("admin")
        for app_name, collections in records.items():
            app = App.objects.for_tenant(tenant).select_related("active_version").get(name=app_name)
            scope = RecordsScope(
                tenant.pk, app.pk, compiled_version(app.active_version), caller_for(tenant, admin)
            )
            for collection, items in collections.items():
                if Record.objects.for_tenant(tenant).filter(app=app, collection=collection).exists():
                    continue
                for data in items:
                    create_record(scope, collection, data)

    def _print_tokens(self, tenant: Tenant, members: list[dict], base_url: str) -> None:
        self.stdout.write(f"\nMCP endpoint: {base_url}/t/{tenant.slug}/mcp  (Authorization: Bearer <token>)")
        for member in members:
            _, raw = actions.issue_token(tenant, member["username"], name="demo", acting_user=None)
            self.stdout.write(f"  {member['username']:<8} {raw}")
