"""A screen's tools/call on the front-end path: the host page relays it to the gateway's tools/call.

Through the HTTP surface the host page uses (a same-origin POST with the session and the CSRF
token): every check of a direct tools/call, a confirmation asked on the host page, the screen's own
app only, anonymous visitors of a public screen as anonymous.
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from mcp_gateway.models import ToolCallAudit
from tests.support.apps import _tool
from tests.support.screen_app import FILES, screen_manifest

pytestmark = pytest.mark.django_db
Outcome = ToolCallAudit.Outcome
CARD = "/t/acme/apps/cases/_screens/card"
NOTICE = "/t/acme/apps/cases/_screens/notice"


def manifest() -> dict:
    """The screens test app plus a confirm tool, a public tool and a public screen."""
    found = screen_manifest()
    found["mcp"]["tools"] += [
        _tool(
            "escalate_case",
            "POST /cases/{case_id}/escalate",
            {"case_id": {"type": "string"}},
            ["case_id"],
            read_only=False,
            confirm=True,
            rateLimit={"calls": 3, "per": "hour"},
        ),
        _tool("ping", "GET /ping"),
    ]
    found["screens"]["notice"] = {"file": "screens/plain.html", "auth": "public"}
    return found


@pytest.fixture
def app(acme, deploy):
    deploy(acme, manifest(), FILES)
    return acme


@pytest.fixture
def case_id(app):
    client, config = page("writer")
    created = call(client, config, "acme_cases_create_case", {"client_name": "Ada", "status": "open"})
    return created["result"]["structuredContent"]["id"]


def page(username: str | None, path: str = CARD) -> tuple[Client, dict]:
    """A browser (CSRF enforced) that opened the host page at ``path``, and the page's config."""
    client = Client(enforce_csrf_checks=True)
    if username:
        client.force_login(get_user_model().objects.get(username=username))
    html = client.get(path).content.decode()
    found = re.search(r'<script id="lcp-host" type="application/json">(.*?)</script>', html)
    return client, json.loads(found.group(1))


def call(client: Client, config: dict, name: str, arguments: dict, confirmed: bool | None = None) -> dict:
    body = {"name": name, "arguments": arguments, "confirmed": confirmed}
    response = client.post(
        config["call"], json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=config["csrf"]
    )
    assert response.status_code == 200, response.content
    return response.json()


def audits(app, name: str) -> list[tuple[str, str | None]]:
    rows = ToolCallAudit.objects.for_tenant(app).filter(wire_name=name).order_by("id")
    return [(row.outcome, row.user.username if row.user else None) for row in rows]


def test_a_call_runs_as_the_signed_in_member_through_the_gateways_tools_call(app, case_id):
    client, config = page("reader")
    answer = call(client, config, "acme_cases_get_case", {"case_id": case_id})
    assert answer["result"]["structuredContent"]["client_name"] == "Ada"
    assert audits(app, "acme_cases_get_case") == [(Outcome.OK, "reader")]


def test_arguments_roles_and_other_apps_are_checked_as_for_any_call(app, case_id):
    client, config = page("reader")
    invalid = call(client, config, "acme_cases_get_case", {"case_id": 7})
    assert invalid["result"]["isError"] and "/case_id" in invalid["result"]["content"][0]["text"]
    # A writer's tool: the reader cannot call it, from a screen or anywhere.
    refused = call(client, config, "acme_cases_escalate_case", {"case_id": case_id})
    assert refused["error"]["code"] == -32602
    # A built-in tool is not a tool of the screen's app.
    builtin = call(client, config, "acme_records_get", {"collection": "cases", "id": case_id})
    assert builtin["error"]["code"] == -32602
    assert audits(app, "acme_cases_get_case") == [(Outcome.INVALID_ARGUMENTS, "reader")]


def test_a_view_only_tool_answers_the_host_page(app, case_id):
    client, config = page("reader")
    answer = call(client, config, "acme_cases_refresh", {"case_id": case_id})
    assert answer["result"]["structuredContent"]["client_name"] == "Ada"


def test_a_confirm_tool_is_asked_about_on_the_host_page_then_runs_or_not(app, case_id):
    client, config = page("writer")
    asked = call(client, config, "acme_cases_escalate_case", {"case_id": case_id})
    assert asked["confirm"]["message"].startswith('Run "Escalate Case" (acme_cases_escalate_case)?')
    assert audits(app, "acme_cases_escalate_case") == []  # asking ran nothing
    declined = call(client, config, "acme_cases_escalate_case", {"case_id": case_id}, confirmed=False)
    assert declined["result"]["isError"] and "declined" in declined["result"]["content"][0]["text"]
    ran = call(client, config, "acme_cases_escalate_case", {"case_id": case_id}, confirmed=True)
    assert ran["result"]["structuredContent"] == {"id": case_id, "escalated": True}
    assert audits(app, "acme_cases_escalate_case") == [
        (Outcome.DECLINED, "writer"),
        (Outcome.CONFIRMED, "writer"),
    ]


def test_the_tools_rate_limit_holds_for_screens_too(app, case_id):
    client, config = page("writer")
    for _ in range(3):
        call(client, config, "acme_cases_escalate_case", {"case_id": case_id}, confirmed=True)
    limited = call(client, config, "acme_cases_escalate_case", {"case_id": case_id}, confirmed=True)
    assert limited["result"]["isError"]
    assert audits(app, "acme_cases_escalate_case")[-1] == (Outcome.RATE_LIMITED, "writer")


def test_without_the_csrf_token_or_from_another_screen_nothing_runs(app, case_id):
    client, config = page("writer")
    body = json.dumps(
        {"name": "acme_cases_escalate_case", "arguments": {"case_id": case_id}, "confirmed": True}
    )
    assert client.post(config["call"], body, content_type="application/json").status_code == 403
    assert audits(app, "acme_cases_escalate_case") == []
    # The plain screen is for writers: a reader's session may not call through it.
    reader, _ = page("reader")
    plain = "/t/acme/apps/cases/_screens/plain/tools/call"
    refused = reader.post(plain, body, content_type="application/json", HTTP_X_CSRFTOKEN=config["csrf"])
    assert refused.status_code in (403, 404)


def test_anonymous_visitors_of_a_public_screen_call_with_anonymous_rights(app, case_id):
    client, config = page(None, NOTICE)
    assert config["toolInput"] is None
    pong = call(client, config, "acme_cases_ping", {})
    assert pong["result"]["structuredContent"] == {"pong": True, "user": None}
    hidden = call(client, config, "acme_cases_get_case", {"case_id": case_id})
    assert hidden["error"]["code"] == -32602
    assert audits(app, "acme_cases_ping") == [(Outcome.OK, None)]


def test_someone_signed_in_for_another_tenant_is_anonymous_to_this_ones_screens(
    app, make_tenant, make_member
):
    make_member(make_tenant("other"), "outsider", admin=True)
    client, config = page("outsider", NOTICE)
    assert "not signed in" in client.get(NOTICE).content.decode()
    pong = call(client, config, "acme_cases_ping", {})
    assert pong["result"]["structuredContent"]["user"] is None  # the handler does not learn who it is
    assert audits(app, "acme_cases_ping") == [(Outcome.OK, None)]
    assert client.get(CARD).status_code == 403  # a members' screen: refused, not "sign in"
