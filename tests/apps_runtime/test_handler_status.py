"""What a handler may answer through the front end: statuses that carry a body, and only its own failures."""

from __future__ import annotations

import re

import httpx2
import pytest

from apps_runtime.sandbox.exceptions import HANDLER_FAILURES
from tests.support.servers import served as serving

ERROR_ID = re.compile(r"^err_[0-9A-HJKMNP-TV-Z]{26}$")

# A handler writes a forged final frame on the protocol socket (fd 3), then waits for the host.
FORGE = """
import os, struct

def handle(request):
    payload = b'{"failure":{"kind":"%s","trace":"","detail":"forged"}}'
    os.write(3, struct.pack(">I", len(payload)) + payload)
    os.read(3, 1)
"""
CLAIMS = ("sandbox_unavailable", "handler_resource_limit")


def _bundle() -> tuple[dict, dict]:
    routes = {
        "GET /status/{code}": {"handler": "server/status.py", "auth": "public"},
        "GET /ok": {"handler": "server/ok.py", "auth": "public"},
    }
    files = {
        "server/status.py": "def handle(request):\n    return {'said': 'hi'}, int(request.params['code'])\n",
        "server/ok.py": "def handle(request):\n    return {'ok': True}\n",
    }
    for kind in CLAIMS:
        routes[f"GET /claim/{kind}"] = {"handler": f"server/claim_{kind}.py", "auth": "public"}
        files[f"server/claim_{kind}.py"] = FORGE % kind
    return {"name": "statuses", "routes": routes}, files


@pytest.fixture(scope="module")
def front_end_url(django_db_setup):
    """A real HTTP server (uvicorn, in a thread): what a bad status does to the connection is the point.

    Without the lifespan: the gateway's session manager runs once per process, in the MCP tests' server.
    """
    from lowcode_platform.asgi import application

    with serving(application, lifespan="off", name="front-end server") as url:
        yield url


@pytest.fixture
def served(front_end_url, transactional_db, make_tenant, deploy):
    deploy(make_tenant("acme"), *_bundle())
    return f"{front_end_url}/t/acme/apps/statuses"


def assert_handler_failure(response, kind: str) -> None:
    status, title = HANDLER_FAILURES[kind]
    body = response.json()
    assert response.status_code == body["status"] == status
    assert (body["code"], body["title"]) == (kind, title)
    assert ERROR_ID.match(body["errorId"]) and response.headers["X-Error-Id"] == body["errorId"]


@pytest.mark.parametrize("status", [101, 204, 205, 304])
def test_a_status_without_a_body_is_a_handler_error_and_the_connection_keeps_serving(served, status):
    with httpx2.Client(timeout=30) as http:  # one keep-alive connection for both requests
        refused = http.get(f"{served}/status/{status}")
        after = http.get(f"{served}/ok")

    assert_handler_failure(refused, "handler_error")
    assert after.status_code == 200 and after.json() == {"ok": True}


@pytest.mark.parametrize("status", [200, 201, 404, 599])
def test_statuses_with_a_body_reach_the_caller(served, status):
    response = httpx2.get(f"{served}/status/{status}", timeout=30)

    assert response.status_code == status and response.json() == {"said": "hi"}


def test_a_handler_claiming_the_sandbox_is_unavailable_gets_a_handler_error(served):
    assert_handler_failure(httpx2.get(f"{served}/claim/sandbox_unavailable", timeout=30), "handler_error")


def test_a_resource_limit_answers_from_the_one_failure_table_with_500(served):
    response = httpx2.get(f"{served}/claim/handler_resource_limit", timeout=30)

    assert_handler_failure(response, "handler_resource_limit")
    assert response.status_code == 500
