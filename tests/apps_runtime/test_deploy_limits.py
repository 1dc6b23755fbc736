"""A deploy too big or nested too deep is refused with its problems (413, 422), never a 500: the REST
API (JSON and .zip) and ``manage.py deploy`` (the console's upload: tests/console/test_apps.py)."""

from __future__ import annotations

import json
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps_runtime.models import App
from tests.console.conftest import bundle_files, multipart, zip_of
from tests.support.apps import HANDLERS, cases_manifest

pytestmark = pytest.mark.django_db
DEEP = 2000  # past Python's JSON parser (about 1,000 levels): it raised RecursionError, a 500
APPS = "/api/tenants/acme/apps"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def admin_api(acme, api_client, make_token):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(acme, 'admin')[1]}")
    api_client.raise_request_exception = False
    return api_client


def problems_of(response) -> list[str]:
    return [f"{p['pointer']}: {p['message']}" for p in response.json()["problems"]]


def test_a_json_deploy_over_the_upload_limit_is_413_with_the_problem(admin_api, acme, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    files = {**HANDLERS, "assets/big.txt": "x" * 200_000}
    response = admin_api.post(APPS, {"manifest": cases_manifest(), "files": files}, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "bundle_too_large"
    assert problems_of(response) == [
        "/: the request body is over 100000 bytes: upload the bundle as a .zip in the form field "
        "'bundle' (multipart/form-data)"
    ]
    assert not App.objects.for_tenant(acme).exists()


def test_a_zip_upload_over_the_archive_limit_is_413_unread(admin_api, acme, monkeypatch):
    monkeypatch.setattr("apps_runtime.manifest.bundle.MAX_TOTAL_BYTES", 1000)
    monkeypatch.setattr("apps_runtime.manifest.bundle.MAX_FILES", 1)
    data = zip_of(bundle_files(files={**HANDLERS, "assets/big.bin": "y" * 200_000}))
    body, content_type = multipart({}, [("bundle", "bundle.zip", data)])
    response = admin_api.generic("POST", APPS, body, content_type=content_type)
    assert response.status_code == 413, response.content
    assert response.json()["code"] == "bundle_too_large"
    assert problems_of(response)[0].startswith("/: the archive is over ")


def test_a_json_deploy_nested_2000_deep_is_422_with_the_problem(admin_api, acme):
    body = '{"manifest": {"name": "cases", "x": ' + nested(DEEP) + '}, "files": {}}'
    response = admin_api.generic("POST", APPS, body, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["code"] == "deploy_rejected"
    assert problems_of(response) == [
        "/: the request body is nested too deep to read (a manifest may nest 64 levels): flatten it"
    ]


def test_a_zip_whose_manifest_is_nested_2000_deep_is_422_with_the_problem(admin_api):
    manifest = '{"name": "cases", "x": ' + nested(DEEP) + "}"
    data = zip_of({**bundle_files(), "app.json": manifest.encode()})
    body, content_type = multipart({}, [("bundle", "bundle.zip", data)])
    response = admin_api.generic("POST", APPS, body, content_type=content_type)
    assert response.status_code == 422
    assert problems_of(response) == [
        "/: app.json is nested too deep to read (a manifest may nest 64 levels): flatten it"
    ]


def test_the_deploy_command_prints_the_problem_of_a_manifest_nested_2000_deep(acme, tmp_path):
    (tmp_path / "app.json").write_text('{"name": "cases", "x": ' + nested(DEEP) + "}")
    out = StringIO()
    with pytest.raises(CommandError, match="deploy refused: 1 problem"):
        call_command("deploy", "acme", str(tmp_path), stdout=out)
    assert out.getvalue() == (
        "/: app.json is nested too deep to read (a manifest may nest 64 levels): flatten it\n"
    )


def test_the_deploy_command_prints_the_problem_of_an_archive_over_the_limit(acme, tmp_path):
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as bundle:
        bundle.writestr("app.json", json.dumps(cases_manifest()))
        bundle.writestr("assets/big.bin", b"\0" * (11 * 1024 * 1024))
    out = StringIO()
    with pytest.raises(CommandError, match="deploy refused: 1 problem"):
        call_command("deploy", "acme", str(archive), stdout=out)
    assert out.getvalue().startswith("/: the archive is over ")
