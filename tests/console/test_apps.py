"""Apps page: deploy a zip or a folder, see problems and warnings, roll back, undeploy."""

from __future__ import annotations

import pytest

from apps_runtime.bundles import unpack_files
from apps_runtime.models import App, AppVersion, Tool
from tenants.models import Tenant
from tests.console.conftest import bundle_files, multipart, zip_of
from tests.support.apps import cases_manifest

pytestmark = pytest.mark.django_db
DEPLOY = "/console/acme/apps/deploy"


def deploy_zip(client, data: bytes):
    body, content_type = multipart({}, [("bundle", "bundle.zip", data)])
    return client.generic("POST", DEPLOY, body, content_type=content_type)


def deploy_folder(client, files: dict[str, bytes], folder: str = "cases/"):
    body, content_type = multipart({}, [("files", folder + path, data) for path, data in files.items()])
    return client.generic("POST", DEPLOY, body, content_type=content_type)


def versions(tenant) -> list[int]:
    return list(AppVersion.objects.for_tenant(tenant).order_by("number").values_list("number", flat=True))


def test_deploying_a_zip_makes_a_new_active_version_and_says_so(signed_in, acme):
    client = signed_in("admin")
    before = Tenant.objects.get(pk=acme.pk).state_version
    response = deploy_zip(client, zip_of(bundle_files()))
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Deployed cases v1 with 8 tools." in page
    assert versions(acme) == [1]
    assert Tool.objects.for_tenant(acme).count() == 8
    assert Tenant.objects.get(pk=acme.pk).state_version > before  # the catalog sees it at once
    assert AppVersion.objects.for_tenant(acme).get().created_by.username == "admin"


def test_deploying_a_folder_keeps_its_relative_paths(signed_in, acme):
    response = deploy_folder(signed_in("admin"), bundle_files())
    assert response.status_code == 302
    version = AppVersion.objects.for_tenant(acme).get()
    assert "server/search.py" in unpack_files(bytes(version.bundle))


def test_a_bad_bundle_shows_every_problem_as_pointer_and_message_and_deploys_nothing(signed_in, acme):
    manifest = cases_manifest(name="Bad Name")
    manifest["mcp"]["tools"][0]["route"] = "GET /nowhere"
    response = deploy_zip(signed_in("admin"), zip_of(bundle_files(manifest)))
    assert response.status_code == 422
    body = response.content.decode()
    assert "Not deployed: 2 problems" in body
    assert "<code>/name</code>: " in body
    assert "<code>/mcp/tools/0/route</code>: " in body
    assert versions(acme) == []


def test_a_hostile_folder_path_is_refused_by_the_bundle_reader(signed_in, acme):
    files = bundle_files()
    files["../escape.py"] = b"x"
    response = deploy_folder(signed_in("admin"), files, folder="")
    assert response.status_code == 422
    assert "escape.py" in response.content.decode()
    assert versions(acme) == []


def test_warnings_are_shown_and_do_not_block_the_deploy(signed_in, acme):
    manifest = cases_manifest()
    manifest["mcp"]["tools"][0]["description"] = "Finds cases."
    client = signed_in("admin")
    response = deploy_zip(client, zip_of(bundle_files(manifest)))
    assert response.status_code == 302
    assert "/mcp/tools/0/description: " in client.get(response["Location"]).content.decode()
    assert versions(acme) == [1]


def test_choosing_both_or_neither_a_zip_and_a_folder_is_a_problem(signed_in, acme):
    client = signed_in("admin")
    body, content_type = multipart({}, [])
    assert client.generic("POST", DEPLOY, body, content_type=content_type).status_code == 422
    data = bundle_files()
    body, content_type = multipart(
        {}, [("bundle", "b.zip", zip_of(data)), ("files", "cases/app.json", data["app.json"])]
    )
    response = client.generic("POST", DEPLOY, body, content_type=content_type)
    assert response.status_code == 422
    assert "either a .zip file or a folder" in response.content.decode()


def test_an_upload_over_the_cap_is_refused_naming_the_cap(signed_in, acme, monkeypatch):
    monkeypatch.setattr("console.uploads.MAX_UPLOAD_BYTES", 1000)
    response = deploy_zip(signed_in("admin"), zip_of(bundle_files()))
    assert response.status_code == 413
    assert "the upload is over 1000 bytes" in response.content.decode()


def test_a_manifest_nested_2000_deep_is_a_problem_not_an_error_page(signed_in, acme):
    manifest = '{"name": "cases", "x": ' + "[" * 2000 + "]" * 2000 + "}"
    response = deploy_zip(signed_in("admin"), zip_of({**bundle_files(), "app.json": manifest.encode()}))
    assert response.status_code == 422
    assert "app.json is nested too deep to read" in response.content.decode()


def test_rolling_back_switches_to_the_version_before(signed_in, acme, deploy):
    deploy(acme)
    deploy(acme, cases_manifest(title="Second"))
    client = signed_in("admin")
    assert "Roll back cases to v1" in client.get("/console/acme/apps/").content.decode()
    response = client.post("/console/acme/apps/cases/rollback")
    assert response.status_code == 302
    app = App.objects.for_tenant(acme).select_related("active_version").get()
    assert app.active_version.number == 1
    assert "Rolled cases back to v1." in client.get(response["Location"]).content.decode()


def test_rolling_back_the_first_version_shows_the_problem(signed_in, acme, deploy):
    deploy(acme)
    response = signed_in("admin").post("/console/acme/apps/cases/rollback")
    assert response.status_code == 422
    assert "has no version before v1" in response.content.decode()


def test_undeploying_removes_the_tools_and_keeps_the_versions(signed_in, acme, deploy):
    deploy(acme)
    response = signed_in("admin").post("/console/acme/apps/cases/undeploy", {"confirm": "cases"})
    assert response.status_code == 302
    assert Tool.objects.for_tenant(acme).count() == 0
    assert versions(acme) == [1]
    assert App.objects.for_tenant(acme).get().active_version is None


def test_undeploying_without_ticking_the_confirmation_changes_nothing(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    assert 'name="confirm" value="cases" required' in client.get("/console/acme/apps/").content.decode()
    for data in ({}, {"confirm": "another_app"}):
        response = client.post("/console/acme/apps/cases/undeploy", data)
        assert response.status_code == 400
        assert "tick the box to confirm" in response.content.decode()
    assert App.objects.for_tenant(acme).get().active_version is not None


def test_undeploying_an_unknown_app_is_a_problem_not_a_crash(signed_in, acme):
    response = signed_in("admin").post("/console/acme/apps/ghost/undeploy", {"confirm": "ghost"})
    assert response.status_code == 422
    assert "no deployed app" in response.content.decode()


@pytest.mark.parametrize("action", ["rollback", "undeploy"])
def test_members_cannot_change_apps(signed_in, acme, deploy, action):
    deploy(acme)
    deploy(acme, cases_manifest(title="Second"))
    assert signed_in("writer").post(f"/console/acme/apps/cases/{action}").status_code == 404
    assert App.objects.for_tenant(acme).select_related("active_version").get().active_version.number == 2


def test_members_cannot_deploy(signed_in, acme):
    assert deploy_zip(signed_in("writer"), zip_of(bundle_files())).status_code == 404
    assert versions(acme) == []


def test_deploy_without_the_csrf_token_is_refused(signed_in, acme):
    assert deploy_zip(signed_in("admin", csrf=True), zip_of(bundle_files())).status_code == 403
    assert versions(acme) == []


def test_deploy_with_the_csrf_token_from_the_page_works(signed_in, acme):
    client = signed_in("admin", csrf=True)
    client.get("/console/acme/apps/")
    token = client.cookies["csrftoken"].value
    body, content_type = multipart(
        {"csrfmiddlewaretoken": token}, [("bundle", "b.zip", zip_of(bundle_files()))]
    )
    assert client.generic("POST", DEPLOY, body, content_type=content_type).status_code == 302
    assert versions(acme) == [1]


@pytest.mark.parametrize("action", ["rollback", "undeploy"])
def test_rollback_and_undeploy_without_the_csrf_token_are_refused(signed_in, acme, deploy, action):
    deploy(acme)
    deploy(acme, cases_manifest(title="Second"))
    assert signed_in("admin", csrf=True).post(f"/console/acme/apps/cases/{action}").status_code == 403
    assert App.objects.for_tenant(acme).select_related("active_version").get().active_version.number == 2


def test_deploy_answers_only_post(signed_in, acme):
    assert signed_in("admin").get(DEPLOY).status_code == 405


def test_a_folder_of_more_files_than_a_request_takes_is_a_problem_not_an_error_page(
    signed_in, acme, settings
):
    files = {f"server/f{n}.py": b"x = 1\n" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FILES)}
    response = deploy_folder(signed_in("admin", csrf=True), {**bundle_files(), **files})
    assert response.status_code == 422
    assert "zip the folder and upload the .zip" in response.content.decode()
    assert versions(acme) == []
