"""The audit of what people changed, through the audit API's shape: pages, filters, export."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from apps_runtime.deploy import deploy_bundle, rollback_app, undeploy_app
from apps_runtime.manifest import bundle_from_mapping
from tenants import actions
from tenants.models import TenantAuditLog
from tests.support.apps import HANDLERS, cases_manifest

# Django's synchronous test client reads the export's async iterator whole and says so.
pytestmark = pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous")


@pytest.fixture
def changes(acme, make_tenant, make_member):
    """acme's admin changes a member, a token, a setting and an app; another tenant has rows too."""
    boss = get_user_model().objects.get(username="admin")
    actions.add_member(acme, "newcomer", roles=["case_reader"], acting_user=boss)
    token, _ = actions.issue_token(acme, "newcomer", acting_user=boss)
    actions.revoke_token(token, acting_user=boss)
    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=boss)
    bundle = bundle_from_mapping(cases_manifest(), HANDLERS)
    deploy_bundle(acme, bundle, acting_user=boss)
    deploy_bundle(acme, bundle, acting_user=boss)
    rollback_app(acme, "cases", acting_user=boss)
    undeploy_app(acme, "cases", acting_user=boss)
    other = make_tenant("other")
    make_member(other, "elsewhere")
    return token


@pytest.fixture
def admin(api_client, acme, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def listed(client, **query) -> list[dict]:
    response = client.get("/api/tenants/acme/audit/changes", query)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def exported(client, **query) -> list[dict]:
    response = client.get("/api/tenants/acme/audit/changes/export", query)
    assert response.status_code == 200 and response["Content-Type"] == "application/jsonl"
    return [json.loads(line) for line in b"".join(response).decode().splitlines()]


def test_deploys_rollbacks_and_undeploys_are_changes_with_who_did_them(admin, changes):
    apps = [(r["action"], r["username"], r["old_value"], r["new_value"]) for r in listed(admin, area="app")]
    assert [a[0] for a in apps] == ["app.undeploy", "app.rollback", "app.deploy", "app.deploy"]
    assert {a[1] for a in apps} == {"admin"}
    assert apps[1][2:] == ({"version": 2}, {"version": 1})
    assert apps[2][3]["version"] == 2 and apps[2][3]["contentHash"]


@pytest.mark.parametrize(
    ("query", "actions_found"),
    [
        ({"action": "token.issue", "member": "admin"}, ["token.issue"]),
        ({"area": "token", "member": "admin"}, ["token.revoke", "token.issue"]),
        ({"area": "token"}, ["token.revoke", "token.issue", "token.issue"]),  # the fixture's own token
        ({"area": "setting"}, ["setting.set"]),
        ({"member": "admin", "area": "member"}, ["member.set"]),
        ({"target": "mcpServer"}, ["setting.set"]),
        ({"until": "2000-01-01T00:00:00Z"}, []),
    ],
)
def test_each_filter_picks_its_changes(admin, changes, query, actions_found):
    assert [r["action"] for r in listed(admin, **query)] == actions_found


def test_the_cursor_walks_every_change_once(admin, changes):
    everything = [r["id"] for r in listed(admin, limit=500)]
    response = admin.get("/api/tenants/acme/audit/changes", {"limit": 3}).json()
    seen = [r["id"] for r in response["results"]]
    while response["next"]:
        response = admin.get(response["next"]).json()
        seen += [r["id"] for r in response["results"]]
    assert seen == everything and len(seen) == TenantAuditLog.objects.for_tenant(changes.tenant).count()


def test_the_export_is_ocsf_and_resumes(admin, changes, settings):
    settings.AUDIT_EXPORT_MAX_ROWS = 3
    lines = exported(admin)
    while len(lines) % 3 == 0 and lines:
        more = exported(admin, after=lines[-1]["metadata"]["uid"])
        if not more:
            break
        lines += more
    rows = list(TenantAuditLog.objects.for_tenant(changes.tenant).order_by("id"))
    assert [line["metadata"]["uid"] for line in lines] == [str(r.id) for r in rows]
    by_action = {line["api"]["operation"]: line for line in lines}
    assert by_action["token.issue"]["activity_id"] == 1 and by_action["token.revoke"]["activity_id"] == 4
    assert by_action["setting.set"]["unmapped"]["new_value"] is False
    assert by_action["app.deploy"]["actor"]["user"]["name"] == "admin"
    assert {line["class_uid"] for line in lines} == {6003}
    assert {line["unmapped"]["tenant"] for line in lines} == {"acme"}


def test_another_tenants_changes_never_appear_and_only_admins_read(api_client, admin, changes, make_token):
    assert all(r["target"] != "elsewhere" for r in listed(admin, limit=500))
    assert all(line["unmapped"]["target"] != "elsewhere" for line in exported(admin))
    _, raw = make_token(changes.tenant, "writer")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/audit/changes").status_code == 403
    assert api_client.get("/api/tenants/acme/audit/changes/export").status_code == 403
