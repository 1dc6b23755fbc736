"""The demo: every fixture bundle deploys, and seed_demo builds the demo tenant (twice, idempotently)."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agents.models import Agent, ProviderKey
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from apps_runtime.models import AppVersion, Record, Tool
from tenants.models import ApiToken, Membership, Tenant

pytestmark = pytest.mark.django_db
FIXTURE_APPS = sorted(p for p in (Path(__file__).parent.parent / "fixtures" / "apps").iterdir() if p.is_dir())


@pytest.mark.parametrize("bundle", FIXTURE_APPS, ids=lambda p: p.name)
def test_every_fixture_bundle_deploys_without_warnings(make_tenant, bundle):
    result = deploy_bundle(make_tenant(), read_bundle(bundle), acting_user=None)
    assert result.tools and result.warnings == []


def _printed_tokens(output: str) -> dict[str, str]:
    rows = [line.split() for line in output.splitlines()]
    return {row[0]: row[-1] for row in rows if row and row[-1].startswith("lcp_")}


def test_seed_demo_builds_the_demo_tenant_and_prints_tokens():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    acme = Tenant.objects.get(slug="acme")
    assert Membership.objects.for_tenant(acme).count() == 5
    assert "acme_case_portal_find_case" in Tool.objects.for_tenant(acme).values_list("wire_name", flat=True)
    assert Record.objects.for_tenant(acme).filter(collection="cases").count() == 3
    tokens = _printed_tokens(out.getvalue())
    assert sorted(tokens) == ["admin", "member", "reader", "root", "writer"]
    assert "deployed case_portal v1: 3 tools" in out.getvalue()
    agent = Agent.objects.for_tenant(acme).get()  # one agent definition, and no key for it
    assert (agent.name, agent.provider, agent.run_as) == ("assistant", "openai", "caller")
    assert not ProviderKey.objects.for_tenant(acme).exists()
    assert "agent assistant defined (openai, no key stored yet)" in out.getvalue()


def test_running_seed_demo_again_changes_nothing_and_says_the_tokens_were_printed_before():
    call_command("seed_demo", stdout=StringIO())
    acme = Tenant.objects.get(slug="acme")
    versions, tokens = AppVersion.objects.for_tenant(acme).count(), ApiToken.objects.for_tenant(acme).count()
    again = StringIO()
    call_command("seed_demo", stdout=again)
    assert AppVersion.objects.for_tenant(acme).count() == versions
    assert ApiToken.objects.for_tenant(acme).count() == tokens
    assert Record.objects.for_tenant(acme).filter(collection="cases").count() == 3
    assert _printed_tokens(again.getvalue()) == {}
    assert Agent.objects.for_tenant(acme).count() == 1
    assert "case_portal v1 is up to date" in again.getvalue()
    assert "seed_demo --rotate-tokens" in again.getvalue()


def test_rotating_the_demo_tokens_revokes_the_old_ones_and_prints_new_ones():
    first = StringIO()
    call_command("seed_demo", stdout=first)
    rotated = StringIO()
    call_command("seed_demo", "--rotate-tokens", stdout=rotated)
    old, new = _printed_tokens(first.getvalue()), _printed_tokens(rotated.getvalue())
    assert sorted(new) == sorted(old) and not set(new.values()) & set(old.values())
    acme = Tenant.objects.get(slug="acme")
    active = [t for t in ApiToken.objects.for_tenant(acme) if t.is_active]
    assert len(active) == 5 and "5 earlier demo tokens revoked" in rotated.getvalue()


def test_the_helpdesk_reads_the_demo_status_page_through_an_outbound_request(
    make_tenant, make_member, settings
):
    """As ``make demo`` runs it: the status page on loopback, only its address allowed (here on a free
    port: the bundle's 8765 is swapped for it)."""
    import importlib.util
    import json
    import threading

    from apps_runtime.dispatch import RouteCall, load_app, run_route
    from apps_runtime.manifest import bundle_from_mapping
    from tenants.callers import caller_for

    root = Path(__file__).parent.parent / "fixtures"
    spec = importlib.util.spec_from_file_location("status_page", root / "status_page" / "serve.py")
    status_page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(status_page)
    server = status_page.make_server(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = str(server.server_address[1])
    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    try:
        bundle = read_bundle(root / "apps" / "helpdesk")
        files = {path: data.replace(b"8765", port.encode()) for path, data in bundle.files.items()}
        tenant = make_tenant()
        deploy_bundle(tenant, bundle_from_mapping(json.loads(files.pop("app.json")), files), acting_user=None)
        member = make_member(tenant, "member").user
        loaded = load_app(tenant, "helpdesk")
        route = loaded.compiled.routes.match("GET", "/status")[0]
        result = run_route(RouteCall(loaded, route, caller_for(tenant, member)))
    finally:
        server.shutdown()
        server.server_close()
    assert result.status == 200, result
    assert result.body["status"] == "degraded"
    assert [c["name"] for c in result.body["components"]] == ["Website", "Email", "VPN"]
