"""The front-end path answers every error as an RFC 9457 problem, with the one API error shape."""

import pytest

pytestmark = pytest.mark.django_db

BASE = "/t/acme/apps/cases"
PROBLEM = "application/problem+json"
PROBLEM_MEMBERS = {"type", "title", "status", "detail", "code"}


@pytest.fixture
def app(acme, deploy):
    deploy(acme)
    return acme


@pytest.fixture
def reader(client, app, make_token):
    _, raw = make_token(app, "reader")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {raw}"
    return client


def test_a_failed_run_is_a_problem_naming_where_tenant_admins_read_it(reader, api_client, make_token, app):
    response = reader.get(f"{BASE}/boom")
    assert response.status_code == 500 and response["Content-Type"] == PROBLEM
    body = response.json()
    assert PROBLEM_MEMBERS <= set(body) and body["code"] == "handler_error"
    assert response["X-Error-Id"] == body["errorId"]
    assert body["instance"] == f"/api/tenants/acme/errors/{body['errorId']}"
    assert body["instance"] in body["detail"]
    _, admin = make_token(app, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {admin}")
    assert api_client.get(body["instance"]).json()["kind"] == "handler_error"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/t/ghost/apps/cases/ping", 404, "tenant_not_found"),
        ("/t/acme/apps/ghost/ping", 404, "not_found"),
        (f"{BASE}/nope", 404, "not_found"),
    ],
)
def test_unknown_tenants_apps_and_routes_are_problems(reader, path, status, code):
    response = reader.get(path)
    assert (response.status_code, response["Content-Type"]) == (status, PROBLEM)
    assert response.json()["code"] == code and PROBLEM_MEMBERS <= set(response.json())


def test_refusals_are_problems_with_their_headers(client, reader):
    anonymous = client.get(f"{BASE}/cases/search", HTTP_AUTHORIZATION="")
    assert (anonymous.status_code, anonymous["Content-Type"]) == (401, PROBLEM)
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    wrong_method = reader.delete(f"{BASE}/cases/search")
    assert (wrong_method.status_code, wrong_method["Content-Type"]) == (405, PROBLEM)
    assert wrong_method["Allow"] == "GET"


def test_the_handlers_own_error_answers_stay_its_own_json(reader):
    response = reader.get(f"{BASE}/status/418")
    assert (response.status_code, response["Content-Type"]) == (418, "application/json")
    assert response.json() == {"error": "status 418 on purpose"}
