"""The demo: every fixture bundle deploys, and seed_demo builds the demo tenant (twice, idempotently)."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from apps_runtime.models import Record, Tool
from tenants.models import Membership, Tenant

pytestmark = pytest.mark.django_db
FIXTURE_APPS = sorted(p for p in (Path(__file__).parent.parent / "fixtures" / "apps").iterdir() if p.is_dir())


@pytest.mark.parametrize("bundle", FIXTURE_APPS, ids=lambda p: p.name)
def test_every_fixture_bundle_deploys_without_warnings(make_tenant, bundle):
    result = deploy_bundle(make_tenant(), read_bundle(bundle), acting_user=None)
    assert result.tools and result.warnings == []


def test_seed_demo_builds_the_demo_tenant_and_prints_tokens():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    call_command("seed_demo", stdout=StringIO())  # a second run refreshes, it does not fail
    acme = Tenant.objects.get(slug="acme")
    assert Membership.objects.for_tenant(acme).count() == 5
    assert "acme_case_portal_find_case" in Tool.objects.for_tenant(acme).values_list("wire_name", flat=True)
    assert Record.objects.for_tenant(acme).filter(collection="cases").count() == 3
    tokens = [line.split()[-1] for line in out.getvalue().splitlines() if "lcp_" in line]
    assert len(tokens) == 5 and all(token.startswith("lcp_") for token in tokens)
