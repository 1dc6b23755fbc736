"""Deploys: versions, wire-name collisions, atomicity, rollback, undeploy, commands and API."""

from __future__ import annotations

import io
import threading
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections

from apps_runtime.deploy import deploy_bundle, rollback_app, undeploy_app
from apps_runtime.manifest import DeployRejected, bundle_from_mapping
from apps_runtime.models import App, AppVersion, Tool
from tests.support.apps import HANDLERS, cases_manifest

pytestmark = pytest.mark.django_db


def tiny(app_name: str, *tool_names: str, route_auth: str = "user") -> tuple[dict, dict]:
    manifest = {
        "name": app_name,
        "routes": {"GET /x": {"handler": "server/x.py", "auth": route_auth}},
        "mcp": {
            "tools": [
                {
                    "name": name,
                    "description": f"A tool called {name} for tests.",
                    "route": "GET /x",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True, "destructiveHint": False},
                }
                for name in tool_names
            ]
        },
    }
    return manifest, {"server/x.py": "def handle(request):\n    return {'v': 1}\n"}


def wires(tenant) -> list[str]:
    return sorted(Tool.objects.for_tenant(tenant).values_list("wire_name", flat=True))


def test_a_deploy_stores_a_version_and_its_tools_wire_names(acme, deploy):
    result = deploy(acme)
    assert result.version.number == 1
    assert result.tools[0] == ("find_case", "acme_cases_find_case")
    assert App.objects.for_tenant(acme).get().active_version == result.version
    assert len(wires(acme)) == 8


def test_a_redeploy_replaces_the_tools_and_frees_removed_names(acme, deploy):
    deploy(acme)
    manifest = cases_manifest()
    manifest["mcp"]["tools"] = manifest["mcp"]["tools"][:2]
    result = deploy(acme, manifest)
    assert result.version.number == 2
    assert wires(acme) == ["acme_cases_find_case", "acme_cases_get_case"]


@pytest.mark.parametrize(
    ("first", "second", "holder"),
    [
        (tiny("other", "find_case"), tiny("other2", "x"), None),
        (tiny("case", "portal_find"), tiny("case_portal", "find"), "tool 'portal_find' of app 'case'"),
        (tiny("records", "x"), tiny("records", "query"), "built-in tool 'records_query'"),
    ],
)
def test_a_wire_name_held_elsewhere_refuses_the_deploy_naming_the_holder(acme, deploy, first, second, holder):
    deploy(acme, *first)
    if holder is None:
        deploy(acme, *second)
        return
    with pytest.raises(DeployRejected) as rejected:
        deploy(acme, *second)
    assert holder in str(rejected.value)
    assert rejected.value.problems[0].pointer.startswith("/mcp/tools/")


def test_two_tools_of_one_deploy_meeting_after_shortening_are_refused(acme, deploy, settings):
    settings.MCP_WIRE_NAME_LIMIT = 24
    # both shorten to the same first 15 characters, but their hashes differ: no clash
    deploy(acme, *tiny("long_app_name", "tool_number_one", "tool_number_two"))
    assert all(len(w) == 24 for w in wires(acme))
    # same tool twice is refused by the validator (uniqueness), not by wire names
    with pytest.raises(DeployRejected):
        deploy(acme, *tiny("dupe", "same", "same"))


def test_a_refused_redeploy_leaves_the_previous_version_serving(acme, deploy, client, make_token):
    deploy(acme)
    broken = cases_manifest()
    broken["mcp"]["tools"][0]["route"] = "GET /nowhere"
    with pytest.raises(DeployRejected):
        deploy(acme, broken)
    assert AppVersion.objects.for_tenant(acme).count() == 1
    _, raw = make_token(acme, "reader")
    assert client.get("/t/acme/apps/cases/listing", HTTP_AUTHORIZATION=f"Bearer {raw}").json() == [1, 2, 3]


def test_rollback_returns_to_the_previous_version_and_its_tools(acme, deploy):
    deploy(acme)
    manifest = cases_manifest()
    manifest["mcp"]["tools"] = manifest["mcp"]["tools"][:1]
    deploy(acme, manifest)
    result = rollback_app(acme, "cases", acting_user=None)
    assert result.version.number == 1
    assert len(wires(acme)) == 8
    with pytest.raises(DeployRejected, match="no version before"):
        rollback_app(acme, "cases", acting_user=None)


def test_undeploy_stops_the_routes_and_frees_the_names(acme, deploy, client, make_token):
    deploy(acme)
    undeploy_app(acme, "cases", acting_user=None)
    assert wires(acme) == []
    _, raw = make_token(acme, "reader")
    assert client.get("/t/acme/apps/cases/listing", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 404
    deploy(acme, *tiny("other", "listing"))  # a name the undeployed app held is free again


def test_deploys_are_tenant_scoped(acme, deploy, make_tenant):
    other = make_tenant("other")
    deploy(acme)
    deploy(other)
    assert wires(other)[0].startswith("other_cases_")


def write_bundle(tmp_path, manifest, files):
    import json

    (tmp_path / "app.json").write_text(json.dumps(manifest))
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return str(tmp_path)


def test_the_deploy_command_prints_each_wire_name(acme, tmp_path):
    out, err = StringIO(), StringIO()
    call_command("deploy", "acme", write_bundle(tmp_path, cases_manifest(), HANDLERS), stdout=out, stderr=err)
    assert out.getvalue().splitlines()[0] == "acme_cases_find_case"
    assert len(out.getvalue().splitlines()) == 8


def test_the_deploy_command_prints_one_problem_a_line_and_fails(acme, tmp_path):
    manifest = cases_manifest(name="Bad Name")
    manifest["mcp"]["tools"][0]["description"] = ""
    out = StringIO()
    with pytest.raises(CommandError, match="deploy refused"):
        call_command(
            "deploy", "acme", write_bundle(tmp_path, manifest, HANDLERS), stdout=out, stderr=StringIO()
        )
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2
    assert any(line.startswith("/name: ") for line in lines)
    assert any(line.startswith("/mcp/tools/0/description: ") for line in lines)
    assert not App.objects.for_tenant(acme).exists()


def test_the_rollback_and_undeploy_commands(acme, deploy):
    deploy(acme)
    deploy(acme)
    call_command("deploy", "acme", "--rollback", "cases", stdout=StringIO(), stderr=StringIO())
    assert App.objects.for_tenant(acme).get().active_version.number == 1
    call_command("undeploy", "acme", "cases", stdout=StringIO())
    with pytest.raises(CommandError, match="no deployed app"):
        call_command("undeploy", "acme", "cases", stdout=StringIO())


def test_the_api_deploys_a_zip_and_answers_422_with_every_problem(acme, api_client, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        import json

        archive.writestr("app.json", json.dumps(cases_manifest()))
        for path, text in HANDLERS.items():
            archive.writestr(path, text)
    buffer.seek(0)
    buffer.name = "bundle.zip"
    created = api_client.post("/api/tenants/acme/apps", {"bundle": buffer}, format="multipart")
    assert created.status_code == 201, created.content
    assert created.json()["active_version"] == 1
    bad = cases_manifest(name="Nope!")
    refused = api_client.post("/api/tenants/acme/apps", {"manifest": bad, "files": HANDLERS}, format="json")
    assert refused.status_code == 422
    assert any(p["pointer"] == "/name" for p in refused.json()["problems"])
    listing = api_client.get("/api/tenants/acme/apps").json()
    assert listing[0]["tools"][0]["wire_name"] == "acme_cases_find_case"
    assert api_client.get("/api/tenants/acme/apps/cases/versions").json()[0]["number"] == 1


def test_the_manifest_schema_is_served(client):
    body = client.get("/api/schema/manifest.json").json()
    assert body["type"] == "object" and "routes" in body["properties"]


@pytest.mark.django_db(transaction=True)
def test_two_racing_deploys_for_one_name_have_exactly_one_winner(make_tenant):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers; the race needs PostgreSQL's concurrent transactions")
    tenant = make_tenant("race")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    # Two apps whose tools meet on one wire name: app "a" tool "b_c" and app "a_b" tool "c".
    bundles = [bundle_from_mapping(*tiny("a", "b_c")), bundle_from_mapping(*tiny("a_b", "c"))]

    def racer(bundle):
        try:
            barrier.wait(timeout=10)
            deploy_bundle(tenant, bundle, acting_user=None)
            outcomes.append("won")
        except DeployRejected as rejected:
            outcomes.append(str(rejected.problems[0]))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=racer, args=(b,)) for b in bundles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes)[-1] == "won" and outcomes.count("won") == 1
    assert "already taken by tool" in sorted(outcomes)[0]
    assert wires(tenant) == ["race_a_b_c"]
