import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db.models import Q
from django.utils import timezone

from agents import definitions
from agents.exceptions import InvalidAgent
from agents.models import Agent
from apps_runtime.bundles import pack_files
from apps_runtime.compiled import compiled_version
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from apps_runtime.models import App, Record
from apps_runtime.records import RecordsScope, create_record
from tenants import actions
from tenants.callers import caller_for
from tenants.models import ApiToken, Tenant
from tenants.scoping import access_user

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
DEMO_TOKEN = "demo"  # the name of the tokens this command issues


class Command(BaseCommand):
    help = (
        "Create the demo tenant from fixtures/, or bring it up to date; safe to run again. Apps are "
        "redeployed only when their files changed, records are seeded once, and each demo user gets a "
        "token the first time (printed then only: --rotate-tokens revokes them and prints new ones)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-tokens", action="store_true", help="do not issue tokens")
        parser.add_argument(
            "--rotate-tokens", action="store_true", help="revoke the demo users' tokens and print new ones"
        )
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
            self._deploy(tenant, app_name)
        self._seed_records(tenant, spec.get("records", {}))
        self._agents(tenant, spec.get("agents", []))
        if not options["no_tokens"]:
            usernames = [member["username"] for member in spec["members"]]
            self._tokens(tenant, usernames, options["base_url"].rstrip("/"), rotate=options["rotate_tokens"])

    def _deploy(self, tenant: Tenant, app_name: str) -> None:
        """Deploy the fixture bundle unless the app already serves exactly these files."""
        bundle = read_bundle(FIXTURES / "apps" / app_name)
        app = App.objects.for_tenant(tenant).select_related("active_version").filter(name=app_name).first()
        active = app.active_version if app else None
        if active is not None and active.content_hash == pack_files(bundle.files)[1]:
            self.stdout.write(f"{app_name} v{active.number} is up to date")
            return
        result = deploy_bundle(tenant, bundle, acting_user=None)
        count = len(result.tools)
        self.stdout.write(f"deployed {app_name} v{result.version.number}: {count} tool{'s' * (count != 1)}")

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

    def _agents(self, tenant: Tenant, specs: list[dict]) -> None:
        """Define each demo agent once, without a key: a tenant admin stores the provider key."""
        for spec in specs:
            if Agent.objects.for_tenant(tenant).filter(name=spec["name"]).exists():
                continue
            try:
                definitions.create_agent(tenant, spec, acting_user=None)
            except InvalidAgent as err:  # e.g. the operator's AGENT_PROVIDERS does not list its provider
                self.stdout.write(f"agent {spec['name']} not defined: {err}")
                continue
            self.stdout.write(f"agent {spec['name']} defined ({spec['provider']}, no key stored yet)")

    def _tokens(self, tenant: Tenant, usernames: list[str], base_url: str, *, rotate: bool) -> None:
        """Print a new token for each demo user who has none (all of them with ``rotate``).

        Tokens are stored hashed, so one printed before cannot be shown again: rotating revokes the
        old ones, so a token never outlives the output it was printed in without the user knowing.
        """
        self.stdout.write(f"\nMCP endpoint: {base_url}/t/{tenant.slug}/mcp  (Authorization: Bearer <token>)")
        kept, revoked = [], 0
        for username in usernames:
            held = list(_active_demo_tokens(tenant, username))
            if held and not rotate:
                kept.append(username)
                continue
            for token in held:
                actions.revoke_token(token, acting_user=None)
            revoked += len(held)
            _, raw = actions.issue_token(tenant, username, name=DEMO_TOKEN, acting_user=None)
            self.stdout.write(f"  {username:<8} {raw}")
        if kept:
            self.stdout.write(
                f"  tokens of {', '.join(kept)}: printed when first issued (stored hashed, never shown "
                "again); `manage.py seed_demo --rotate-tokens` revokes them and prints new ones"
            )
        if revoked:
            self.stdout.write(f"  ({revoked} earlier demo token{'s' * (revoked != 1)} revoked)")


def _active_demo_tokens(tenant: Tenant, username: str):
    now = timezone.now()
    return ApiToken.objects.for_tenant(tenant).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now),
        user__username=username,
        name=DEMO_TOKEN,
        revoked_at__isnull=True,
    )
