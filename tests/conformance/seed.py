"""The fixture tenant of the conformance suite (run inside ``manage.py shell``, see ``suite``).

Tenant ``conformance`` with prefix ``test``: each bundle under ``apps/`` is deployed through the
ordinary deploy path, so app ``simple`` with tool ``text`` is served as ``test_simple_text``, the
name the suite calls. One member, no roles, and a token for the auth-adding proxy.
"""

from __future__ import annotations

from pathlib import Path

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import read_bundle
from tenants import actions

APPS = Path(__file__).resolve().parent / "apps"
SLUG, PREFIX, USER = "conformance", "test", "suite"


def seed() -> dict:
    """Create the tenant, deploy every bundle; returns ``{"token": raw, "tools": [wire names]}``."""
    tenant = actions.create_tenant(SLUG, prefix=PREFIX, acting_user=None)
    actions.add_member(tenant, USER, acting_user=None)
    tools: list[str] = []
    for bundle in sorted(APPS.iterdir()):
        deployed = deploy_bundle(tenant, read_bundle(bundle), acting_user=None)
        tools += [wire_name for _, wire_name in deployed.tools]
    return {"token": actions.issue_token(tenant, USER, acting_user=None)[1], "tools": tools}
