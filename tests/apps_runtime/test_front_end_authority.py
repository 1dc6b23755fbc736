"""What the apps' front-end path accepts as a caller: a bearer token or nobody, never the session;
and a ``confirm`` tool's route, which nobody there can confirm, is refused while confirmations are on."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tenants.actions import set_tenant_setting
from tests.support.apps import _tool, cases_manifest_plus

pytestmark = pytest.mark.django_db
BASE = "/t/acme/apps/cases"


@pytest.fixture
def app(acme, deploy):
    escalate = _tool(
        "escalate_case",
        "POST /cases/{case_id}/escalate",
        {"case_id": {"type": "string"}},
        ["case_id"],
        read_only=False,
        confirm=True,
    )
    deploy(acme, cases_manifest_plus({}, [escalate]))
    return acme


def test_a_signed_in_session_is_not_a_caller_of_app_routes(app):
    browser = Client()
    browser.force_login(get_user_model().objects.get(username="root"))
    assert browser.get(f"{BASE}/cases/search?query=ad").status_code == 401  # as if signed out
    assert browser.get(f"{BASE}/ping").json()["user"] is None  # public routes answer, anonymously


def test_a_confirm_tools_route_is_refused_to_tokens_while_confirmations_are_on(app, client, make_token):
    _, raw = make_token(app, "writer")
    created = client.post(
        f"{BASE}/cases",
        {"client_name": "Ada"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    case = created.json()["id"]
    escalate = f"{BASE}/cases/{case}/escalate"
    refused = client.post(escalate, {}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert refused.status_code == 403
    assert "needs the user's confirmation" in refused.json()["detail"]
    set_tenant_setting(app, "confirmDestructiveTools", False, acting_user=None)
    ran = client.post(escalate, {}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert ran.json()["escalated"] is True, ran.content


def test_route_answers_are_json_that_runs_nothing_if_opened_as_a_page(app, client):
    for path in (f"{BASE}/ping", f"{BASE}/nope"):
        response = client.get(path)
        assert response["Content-Type"].endswith("json")
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"].startswith("sandbox; default-src 'none'")
