"""Seed a served platform's own database (run inside ``manage.py shell``, see ``platform_process``).

The same people as the ``acme`` fixture, the test app deployed, and a token for each of them.
"""

from __future__ import annotations

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from tenants import actions
from tenants.models import Tenant
from tests.support.apps import HANDLERS, cases_manifest

PEOPLE = {
    "reader": {"roles": ["case_reader"]},
    "writer": {"roles": ["case_writer"]},
    "member": {},
    "admin": {"roles": ["case_writer"], "admin": True},
    "root": {"superuser": True},
}


def seed(slug: str = "acme", prefix: str = "") -> dict:
    """Tenant ``slug`` with the test app and ``PEOPLE`` (usernames ``prefix + name``).

    Returns ``{"tokens": {name: raw}}``; ``readonly`` is a read-only token of the writer.
    """
    tenant = actions.create_tenant(slug, acting_user=None)
    for name, options in PEOPLE.items():
        actions.add_member(tenant, prefix + name, acting_user=None, **options)
    deploy_bundle(tenant, bundle_from_mapping(cases_manifest(), HANDLERS), acting_user=None)
    return {
        "tokens": {name: issue(slug, prefix + name) for name in PEOPLE}
        | {"readonly": issue(slug, prefix + "writer", read_only=True)}
    }


def restore(slug: str, name: str, prefix: str = "") -> str:
    """Give ``prefix + name`` back their seeded membership and a fresh token (a fuzzer took them away)."""
    tenant = Tenant.objects.get(slug=slug)
    actions.add_member(tenant, prefix + name, acting_user=None, **PEOPLE[name])
    return issue(slug, prefix + name)


def issue(slug: str, username: str, *, read_only: bool = False) -> str:
    tenant = Tenant.objects.get(slug=slug)
    return actions.issue_token(tenant, username, read_only=read_only, acting_user=None)[1]
