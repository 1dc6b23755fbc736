"""POST /api/tenants/<slug>/apps/validate: the deploy's verdict, nothing deployed; refusals carry warnings."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps_runtime.models import App
from tenants.models import TenantAuditLog
from tests.support.apps import HANDLERS, cases_manifest

# A handler bound by an import: it deploys, with a warning that only a call checks it.
DYNAMIC = {
    **HANDLERS,
    "server/search.py": "from server.lib import handle\n",
    "server/lib.py": HANDLERS["server/search.py"],
}


@pytest.fixture
def admin_api(acme, api_client, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def test_validate_answers_wire_names_and_warnings_and_deploys_nothing(acme, admin_api):
    answer = admin_api.post(
        "/api/tenants/acme/apps/validate", {"manifest": cases_manifest(), "files": DYNAMIC}, format="json"
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["valid"] is True and body["problems"] == []
    assert {"name": "find_case", "wire_name": "acme_cases_find_case"} in body["tools"]
    assert any(w.startswith("/routes/") and "handle is not bound" in w for w in body["warnings"])
    assert not App.objects.for_tenant(acme).exists()


def test_validate_answers_every_problem_with_its_pointer_and_the_warnings(acme, admin_api):
    bad = cases_manifest(name="Nope!")
    answer = admin_api.post(
        "/api/tenants/acme/apps/validate", {"manifest": bad, "files": DYNAMIC}, format="json"
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["valid"] is False and body["tools"] == []
    assert any(p["pointer"] == "/name" for p in body["problems"])
    assert any("handle is not bound" in w for w in body["warnings"])


def test_validate_sees_wire_names_held_by_the_tenants_other_apps(acme, admin_api, deploy):
    deploy(acme)
    clash = cases_manifest(name="cases_find")
    clash["mcp"]["tools"] = [dict(clash["mcp"]["tools"][0], name="case")]
    answer = admin_api.post(
        "/api/tenants/acme/apps/validate", {"manifest": clash, "files": HANDLERS}, format="json"
    )
    [problem] = answer.json()["problems"]
    assert problem["pointer"] == "/mcp/tools/0/name" and "already taken" in problem["message"]


def test_a_refused_deploy_reports_its_warnings_with_its_problems(acme, admin_api):
    bad = cases_manifest(name="Nope!")
    refused = admin_api.post("/api/tenants/acme/apps", {"manifest": bad, "files": DYNAMIC}, format="json")
    assert refused.status_code == 422
    assert any("handle is not bound" in w for w in refused.json()["warnings"])


def test_the_deploy_command_prints_a_refusals_warnings_on_stderr(acme, tmp_path):
    (tmp_path / "app.json").write_text(__import__("json").dumps(cases_manifest(name="Nope!")))
    for path, text in DYNAMIC.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="deploy refused"):
        call_command("deploy", "acme", str(tmp_path), stdout=out, stderr=err)
    assert "/name: " in out.getvalue()
    assert "warning: /routes/" in err.getvalue()


def test_only_tenant_admins_may_validate(acme, api_client, make_token):
    _, raw = make_token(acme, "writer")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = {"manifest": cases_manifest(), "files": HANDLERS}
    assert api_client.post("/api/tenants/acme/apps/validate", body, format="json").status_code == 403


def test_deploys_rollbacks_and_undeploys_are_in_the_tenant_audit_log(acme, admin_api, deploy):
    body = {"manifest": cases_manifest(), "files": HANDLERS}
    assert admin_api.post("/api/tenants/acme/apps", body, format="json").status_code == 201
    assert admin_api.post("/api/tenants/acme/apps", body, format="json").status_code == 201
    call_command("deploy", "acme", "--rollback", "cases", stdout=StringIO(), stderr=StringIO())
    call_command("undeploy", "acme", "cases", stdout=StringIO())
    log = TenantAuditLog.objects.for_tenant(acme).filter(target="cases").order_by("created_at", "id")
    rows = [(row.action, row.acting_user and row.acting_user.username, row.new_value) for row in log]
    assert [(action, who) for action, who, _ in rows] == [
        ("app.deploy", "admin"),
        ("app.deploy", "admin"),
        ("app.rollback", None),
        ("app.undeploy", None),
    ]
    assert rows[1][2]["version"] == 2 and rows[2][2] == {"version": 1}


def test_the_errors_list_pages_forward_from_a_cursor(acme, admin_api, deploy, client, make_token):
    deploy(acme)
    empty = admin_api.get("/api/tenants/acme/errors").json()
    assert empty == {"errors": [], "cursor": "0"}
    _, raw = make_token(acme, "admin")
    for _ in range(3):
        failed = client.get("/t/acme/apps/cases/boom", HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert failed.status_code == 500
    first = admin_api.get("/api/tenants/acme/errors", {"limit": 2}).json()
    assert len(first["errors"]) == 2 and first["errors"][0]["app"] == "cases"
    assert "hunter2" in first["errors"][0]["trace"]
    newer = admin_api.get("/api/tenants/acme/errors", {"since": first["cursor"]}).json()
    assert newer["errors"] == [] and newer["cursor"] == first["cursor"]
    everything = admin_api.get("/api/tenants/acme/errors", {"since": "0"}).json()
    assert [e["error_id"] for e in everything["errors"]][1:] == [e["error_id"] for e in first["errors"]]
    assert admin_api.get("/api/tenants/acme/errors", {"limit": "x"}).status_code == 400


def test_validate_refuses_a_body_too_big_to_read_as_a_deploy_does(admin_api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    admin_api.raise_request_exception = False
    files = {**HANDLERS, "assets/big.txt": "x" * 200_000}
    answer = admin_api.post(
        "/api/tenants/acme/apps/validate", {"manifest": cases_manifest(), "files": files}, format="json"
    )
    assert answer.status_code == 413 and answer.json()["code"] == "bundle_too_large"
