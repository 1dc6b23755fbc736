"""The front-end path /t/<tenant>/apps/<app>/<route>: statuses, auth, records, failures."""

import pytest

from apps_runtime.models import HandlerError, Record

pytestmark = pytest.mark.django_db

BASE = "/t/acme/apps/cases"


@pytest.fixture
def app(acme, deploy):
    deploy(acme)
    return acme


@pytest.fixture
def as_user(client, app, make_token):
    def login(username: str, **kwargs):
        _, raw = make_token(app, username, **kwargs)
        client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {raw}"
        return client

    return login


def test_public_routes_answer_anonymous_callers(client, app):
    response = client.get(f"{BASE}/ping")
    assert response.status_code == 200
    assert response.json() == {"pong": True, "user": None}


def test_anonymous_callers_get_401_on_non_public_routes(client, app):
    response = client.get(f"{BASE}/cases/search")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_bad_token_gets_401(client, app):
    response = client.get(f"{BASE}/ping", HTTP_AUTHORIZATION="Bearer lcp_nope_nope")
    assert response.status_code == 401


def test_callers_without_the_roles_get_403(as_user):
    assert as_user("member").get(f"{BASE}/cases/search").status_code == 403


def test_internal_routes_unknown_paths_and_unknown_apps_are_404(as_user):
    client = as_user("root")
    assert client.post(f"{BASE}/jobs/reindex").status_code == 404
    assert client.get(f"{BASE}/nope").status_code == 404
    assert client.get("/t/acme/apps/ghost/ping").status_code == 404
    assert client.get("/t/ghost/apps/cases/ping").status_code == 404


def test_apps_of_other_tenants_are_404(client, app, make_tenant, make_member, make_token):
    other = make_tenant("other")
    make_member(other, "bob", roles=["case_reader"])
    _, raw = make_token(other, "bob")
    assert client.get("/t/other/apps/cases/ping", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 404
    # and acme's app refuses other's token
    assert client.get(f"{BASE}/cases/search", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_a_known_path_with_another_method_is_405(as_user):
    response = as_user("writer").delete(f"{BASE}/cases/search")
    assert response.status_code == 405
    assert response["Allow"] == "GET"


def test_body_query_and_params_reach_the_handler_as_the_caller(as_user):
    client = as_user("reader")
    response = client.post(f"{BASE}/echo/widget?x=1&y=two", {"a": [1, 2]}, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {
        "method": "POST",
        "path": "/echo/{thing}",
        "body": {"a": [1, 2]},
        "query": {"x": "1", "y": "two"},
        "params": {"thing": "widget"},
        "tool": None,
        "user": {"username": "reader", "roles": ["case_reader"], "superuser": False},
    }


def test_invalid_json_and_non_object_bodies_are_400_and_other_media_415(as_user):
    client = as_user("reader")
    assert client.post(f"{BASE}/echo/x", "{nope", content_type="application/json").status_code == 400
    assert client.post(f"{BASE}/echo/x", "[1]", content_type="application/json").status_code == 400
    assert client.post(f"{BASE}/echo/x", {"a": "1"}).status_code == 415


def test_a_deeply_nested_body_is_400_not_a_server_error(as_user):
    client = as_user("writer")
    for depth in (70, 100_000):
        body = '{"a":' + "[" * depth + "]" * depth + "}"
        response = client.post(f"{BASE}/cases/c1/escalate", body, content_type="application/json")
        assert response.status_code == 400
        assert "nested deeper" in str(response.json())


def test_oversized_requests_are_413(as_user, settings):
    settings.SANDBOX_MAX_REQUEST_BYTES = 100
    response = as_user("reader").post(f"{BASE}/echo/x", {"a": "x" * 200}, content_type="application/json")
    assert response.status_code == 413


def test_the_handler_status_and_json_come_back_as_they_are(as_user):
    response = as_user("reader").get(f"{BASE}/status/418")
    assert response.status_code == 418
    assert response.json() == {"error": "status 418 on purpose"}


def test_records_round_trip_with_permissions_per_caller(as_user, app):
    writer = as_user("writer")
    created = writer.post(f"{BASE}/cases", {"client_name": "Ada"}, content_type="application/json")
    assert created.status_code == 201
    record_id = created.json()["id"]
    reader = as_user("reader")
    assert reader.get(f"{BASE}/cases/{record_id}").json()["client_name"] == "Ada"
    assert reader.get(f"{BASE}/cases/search?query=ad").json() == [{"client_name": "Ada"}]
    # the reader may call the escalate handler only if the route allowed it: it does not
    escalate = f"{BASE}/cases/{record_id}/escalate"
    assert reader.post(escalate, content_type="application/json").status_code == 403
    assert as_user("writer").post(escalate, content_type="application/json").json()["escalated"] is True
    assert Record.objects.for_tenant(app).get().created_by == "writer"


def test_data_breaking_the_collection_schema_is_refused(as_user):
    response = as_user("writer").post(f"{BASE}/cases", {"client_name": ""}, content_type="application/json")
    assert response.status_code == 400
    assert "client_name" in response.json()["error"]


def test_a_read_only_token_cannot_post(as_user):
    assert (
        as_user("writer", read_only=True)
        .post(f"{BASE}/cases", {"client_name": "A"}, content_type="application/json")
        .status_code
        == 403
    )


def test_a_handler_exception_gives_an_error_id_and_no_trace(as_user, app):
    response = as_user("reader").get(f"{BASE}/boom")
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "handler_error" and body["errorId"].startswith("err_")
    assert response["X-Error-Id"] == body["errorId"]
    text = response.content.decode()
    assert "hunter2" not in text and "/srv/host" not in text and "Traceback" not in text
    error = HandlerError.objects.for_tenant(app).get(error_id=body["errorId"])
    assert "server/boom.py" in error.trace and "RuntimeError" in error.trace


def test_a_timeout_answers_at_its_limit_and_the_next_call_works(as_user):
    client = as_user("reader")
    response = client.get(f"{BASE}/loop")
    assert response.status_code == 504
    assert response.json()["code"] == "handler_timeout"
    assert client.get(f"{BASE}/ping").status_code == 200


def test_tenant_admins_read_their_handlers_traceback_by_error_id(as_user, api_client, app, make_token):
    error_id = as_user("reader").get(f"{BASE}/boom").json()["errorId"]
    _, admin_raw = make_token(app, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {admin_raw}")
    body = api_client.get(f"/api/tenants/acme/errors/{error_id}").json()
    assert body["kind"] == "handler_error" and "server/boom.py" in body["trace"]
    _, reader_raw = make_token(app, "reader")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {reader_raw}")
    assert api_client.get(f"/api/tenants/acme/errors/{error_id}").status_code == 403
