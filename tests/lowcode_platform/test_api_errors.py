"""Every /api/ error is one RFC 9457 problem shape: status and code from the exception that was raised."""

import io
import json
import zipfile

import pytest

from lowcode_platform.api_errors import exception_handler

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
PROBLEM_MEMBERS = {"type", "title", "status", "detail", "code"}


@pytest.fixture
def admin_api(api_client, acme, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def _problem(response, status: int, code: str) -> dict:
    assert (response.status_code, response["Content-Type"]) == (status, PROBLEM), response.content
    body = response.json()
    assert PROBLEM_MEMBERS <= set(body) and (body["status"], body["code"]) == (status, code)
    return body


def test_authentication_and_permission_refusals_are_problems(api_client, acme, make_token):
    refused = _problem(api_client.get("/api/tenants/acme/settings"), 401, "not_authenticated")
    assert refused["detail"]
    _, raw = make_token(acme, "reader")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    _problem(api_client.get("/api/tenants/acme/settings"), 403, "permission_denied")


def test_domain_errors_carry_their_own_status_and_code(admin_api):
    body = _problem(admin_api.get("/api/tenants/acme/members/ghost"), 404, "not_a_member")
    assert "ghost" in body["detail"]
    _problem(admin_api.get("/api/tenants/acme/errors/err_nope"), 404, "not_found")
    _problem(admin_api.get("/api/tenants/acme/runs/run_nope"), 404, "not_found")


def test_invalid_fields_are_listed_under_errors(admin_api):
    response = admin_api.patch("/api/tenants/acme/settings", {"bogus": True}, format="json")
    body = _problem(response, 400, "invalid")
    assert body["errors"] == {"bogus": ["unknown setting"]} and "bogus" in body["detail"]


def test_a_refused_deploy_lists_every_problem_with_its_pointer(admin_api):
    payload = {"manifest": {"name": "Bad Name", "routes": {}}, "files": {}}
    body = _problem(admin_api.post("/api/tenants/acme/apps", payload, format="json"), 422, "deploy_rejected")
    assert any(p["pointer"] == "/name" for p in body["problems"]) and body["warnings"] == []


def test_an_upload_in_the_wrong_form_field_names_the_bundle_field(admin_api):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("app.json", "{}")
    archive.seek(0)
    archive.name = "app.zip"
    response = admin_api.post("/api/tenants/acme/apps", {"file": archive}, format="multipart")
    body = _problem(response, 400, "invalid")
    assert "form field 'bundle'" in body["errors"]["bundle"][0] and "'file'" in body["detail"]


def test_a_surprise_is_a_500_with_only_an_error_id(caplog):
    response = exception_handler(RuntimeError("password hunter2 at /srv/host"), {})
    body = json.loads(response.content)
    assert (response.status_code, response["Content-Type"], body["code"]) == (500, PROBLEM, "server_error")
    assert response["X-Error-Id"] == body["errorId"] and body["errorId"] in body["detail"]
    assert "hunter2" not in response.content.decode() and "/srv/host" not in response.content.decode()
    assert body["errorId"] in caplog.text


def test_a_surprise_outside_the_api_is_the_same_500_body(client, settings, caplog):
    settings.ROOT_URLCONF = "tests.lowcode_platform.boom_urls"
    client.raise_request_exception = False

    response = client.get("/boom")

    body = json.loads(response.content)
    api = json.loads(exception_handler(RuntimeError("x"), {}).content)
    assert (response.status_code, response["Content-Type"]) == (500, PROBLEM)
    assert response["X-Error-Id"] == body["errorId"] != api["errorId"]
    assert body["detail"] == api["detail"].replace(api["errorId"], body["errorId"])
    assert {k: v for k, v in body.items() if k not in ("detail", "errorId")} == {
        k: v for k, v in api.items() if k not in ("detail", "errorId")
    }
    assert "hunter2" not in response.content.decode() and body["errorId"] in caplog.text


def test_every_package_error_base_is_a_domain_error():
    from agents.exceptions import AgentError
    from apps_runtime.exceptions import RuntimeDomainError
    from apps_runtime.manifest import DeployRejected
    from core.errors import DomainError
    from oauth.exceptions import OAuthError
    from tenants.exceptions import TenantError

    for base in (TenantError, RuntimeDomainError, DeployRejected, AgentError, OAuthError):
        assert issubclass(base, DomainError), base


def test_a_domain_error_no_handler_lists_renders_as_its_own_problem():
    from core.errors import DomainError

    class Teapot(DomainError):
        status, code = 418, "teapot"

        def problem_members(self) -> dict:
            return {"pot": "brown"}

    response = exception_handler(Teapot("short and stout"), {})
    body = json.loads(response.content)
    assert (response.status_code, response["Content-Type"]) == (418, PROBLEM)
    assert (body["code"], body["detail"], body["pot"]) == ("teapot", "short and stout", "brown")


def test_an_oauth_error_renders_with_its_own_code():
    from oauth.exceptions import ConnectionNotFound

    response = exception_handler(ConnectionNotFound(7), {})
    body = json.loads(response.content)
    assert (response.status_code, body["code"], body["detail"]) == (400, "not_found", "no such connection")


def test_a_domain_error_marks_an_atomic_request_for_rollback(monkeypatch):
    from django.db import connection, transaction

    from tenants.exceptions import TenantNotFound

    monkeypatch.setitem(connection.settings_dict, "ATOMIC_REQUESTS", True)
    with transaction.atomic():
        response = exception_handler(TenantNotFound("ghost"), {})
        assert transaction.get_rollback() is True
        transaction.set_rollback(False)
    assert response.status_code == 404
