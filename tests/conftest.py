"""Factories shared by every test: each fills in what the test does not care about."""

from __future__ import annotations

import itertools
import os
import ssl
from collections import Counter

import pytest
from rest_framework.test import APIClient

from tenants import actions
from tenants.models import ApiToken, Membership, Tenant

_seq = itertools.count(1)


def pytest_configure(config: pytest.Config) -> None:
    _share_default_ssl_contexts()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's shared PostgreSQL template of served platforms goes once every process is done with it:
    in the xdist controller (or the only process of a serial run), never in a worker."""
    if hasattr(config, "workerinput") or not hasattr(config, "_tmp_path_factory"):
        return
    from tests.support import platform_process

    platform_process.drop_shared_template(config._tmp_path_factory.getbasetemp())


def _share_default_ssl_contexts() -> None:
    """One default TLS context for all of the suite's HTTP clients, not one each.

    Every ``httpx2`` client (the SDK's, the wire helpers') loads the system CA store when it is made:
    50 ms of CPU, thousands of times a run, for clients that talk plain HTTP on loopback. The context
    is kept per ``SSL_CERT_FILE``/``SSL_CERT_DIR``, which a test may point at a CA of its own.
    """
    import httpcore2

    build = httpcore2.default_ssl_context
    made: dict[tuple, ssl.SSLContext] = {}

    def shared(*, _trust_env: bool = True) -> ssl.SSLContext:
        key = (_trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if key not in made:
            made[key] = build(_trust_env=_trust_env)
        return made[key]

    httpcore2.default_ssl_context = shared


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with ``slow`` tests first, then the others by size: longest first.

    ``make test`` hands whole modules to its workers in this order (``--dist loadscope
    --no-loadscope-reorder``). The slow modules (real servers, subprocesses, browsers) take a minute or
    more each; dealt out last, as by test count or by name, one of them ran alone at the end while the
    other workers sat idle (a third of the wall time on 2 cores).
    """
    slow = Counter(item.module.__name__ for item in items if item.get_closest_marker("slow"))
    size = Counter(item.module.__name__ for item in items)
    items.sort(key=lambda item: (not slow[item.module.__name__], -size[item.module.__name__]))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """Each worker's test database is built from the models, not by replaying the migrations.

    Replaying them took 6 s of CPU per worker (a third-party migration that relabels fields re-renders
    every model). Nothing is lost: no migration creates anything but the models' tables (the data
    migrations fill in rows an empty database has none of), ``tests/test_migrations.py`` fails when the
    models and the migrations disagree, and every served platform of the suite (``migrated_database``)
    runs the real migrations.
    """
    from django.conf import settings

    for database in settings.DATABASES.values():
        database.setdefault("TEST", {})["MIGRATE"] = False


@pytest.fixture(scope="session", autouse=True)
def _shared_platform_template(tmp_path_factory, worker_id) -> None:
    """The migrated template of served platforms (``migrated_database``, SQLite or PostgreSQL) is kept
    in the run's shared temporary folder: the xdist workers migrate once between them instead of once
    each (8.6 s of CPU)."""
    from tests.support import platform_process

    base = tmp_path_factory.getbasetemp()
    platform_process.TEMPLATE_ROOT = base if worker_id == "master" else base.parent


@pytest.fixture(scope="session", autouse=True)
def _test_database_freed_at_the_end(django_db_setup, django_db_blocker):
    """Servers in threads (``live_url``, a module's own) leave connections in their worker threads;
    they are cut once, when the run ends, so the test database can be dropped. Not at a module's end:
    that cut the connections of the live server that later modules of the worker still use."""
    from tests.support.servers import drop_server_connections

    yield
    drop_server_connections(django_db_blocker)


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Anonymous endpoints count attempts per source address in the cache (oauth/throttle.py); every
    test client comes from 127.0.0.1, so each test starts with no attempts counted."""
    from django.core.cache import cache

    cache.clear()


# One live server per test process: the platform's ASGI app starts its MCP session manager once, so
# every package's tests that need a real server share this one (defined once, here).
@pytest.fixture(scope="session")
def live_url(django_db_setup):
    """The platform served by uvicorn on a free port, in a thread (session-wide)."""
    from django.conf import settings

    from lowcode_platform.asgi import application
    from tests.support.servers import served

    settings.JOBS_IN_PROCESS_CLOCK = False  # tests tick the scheduler themselves
    with served(application) as url:
        yield url


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
