"""Factories shared by every test: each fills in what the test does not care about."""

from __future__ import annotations

import itertools

import pytest
from rest_framework.test import APIClient

from tenants import actions
from tenants.models import ApiToken, Membership, Tenant

_seq = itertools.count(1)


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Anonymous endpoints count attempts per source address in the cache (oauth/throttle.py); every
    test client comes from 127.0.0.1, so each test starts with no attempts counted."""
    from django.core.cache import cache

    cache.clear()


# One live server per test process: the platform's ASGI app starts its MCP session manager once, so
# every package's tests that need a real server share this one (defined once, here).
@pytest.fixture(scope="session")
def live_url(django_db_setup, django_db_blocker):
    """The platform served by uvicorn on a free port, in a thread (session-wide)."""
    from django.conf import settings

    from lowcode_platform.asgi import application
    from tests.support.servers import drop_server_connections, served

    settings.JOBS_IN_PROCESS_CLOCK = False  # tests tick the scheduler themselves
    with served(application) as url:
        yield url
    drop_server_connections(django_db_blocker)


@pytest.fixture
def mcp_url(live_url, transactional_db):
    return lambda slug="acme": f"{live_url}/t/{slug}/mcp"


@pytest.fixture
def make_tenant(db):
    def make(slug: str | None = None, **kwargs) -> Tenant:
        slug = slug or f"t{next(_seq)}"
        return actions.create_tenant(slug, acting_user=None, **kwargs)

    return make


@pytest.fixture
def make_member(db):
    def make(tenant: Tenant, username: str | None = None, **kwargs) -> Membership:
        return actions.add_member(tenant, username or f"user{next(_seq)}", acting_user=None, **kwargs)

    return make


@pytest.fixture
def make_token(db):
    def make(tenant: Tenant, username: str, **kwargs) -> tuple[ApiToken, str]:
        return actions.issue_token(tenant, username, acting_user=None, **kwargs)

    return make


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def deploy(db):
    """Deploy a manifest (defaults: the test app) with its handler files into a tenant."""
    from apps_runtime.deploy import deploy_bundle
    from apps_runtime.manifest import bundle_from_mapping
    from tests.support.apps import HANDLERS, cases_manifest

    def run(tenant: Tenant, manifest: dict | None = None, files: dict | None = None):
        bundle = bundle_from_mapping(manifest or cases_manifest(), files or HANDLERS)
        return deploy_bundle(tenant, bundle, acting_user=None)

    return run


@pytest.fixture
def acme(make_tenant, make_member):
    """Tenant acme with a reader, a writer, a member without roles, an admin and a superuser."""
    tenant = make_tenant("acme")
    make_member(tenant, "reader", roles=["case_reader"])
    make_member(tenant, "writer", roles=["case_writer"])
    make_member(tenant, "member")
    make_member(tenant, "admin", roles=["case_writer"], admin=True)
    actions.add_member(tenant, "root", superuser=True, acting_user=None)
    return tenant
