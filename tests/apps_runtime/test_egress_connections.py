"""Members' own connections (docs/egress.md): a member connects their account at a fake OAuth provider
from the console (authorization code + PKCE), and their calls carry their own token, never another
member's; a member who has not connected, a job and an anonymous caller get a refusal naming the fix.
The MCP result of a refused call is isError with the link.
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from django.test import Client
from django.utils import timezone

from apps_runtime.models import OutboundConnection
from mcp_gateway.transport.in_process import connect
from tenants.models import Tenant
from tests.support.fake_services import start_fake_service

pytestmark = pytest.mark.django_db(transaction=True)

HANDLER = """
from platform_sdk import EgressRefused

def handle(request):
    try:
        r = request.http.get(request.body["url"], connection="crm")
    except EgressRefused as e:
        return {"refused": e.rule, "retryable": e.retryable}
    return {"seen": r["json"]["headers"].get("authorization")}
"""
UNCAUGHT = """
def handle(request):
    return request.http.get(request.body["url"], connection="crm")["json"]
"""


@pytest.fixture
def crm():
    service = start_fake_service("127.0.0.1")
    yield service
    service.close()


@pytest.fixture
def app(acme, deploy, crm, settings, make_member):
    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.OUTBOUND_OAUTH_PROVIDERS = {
        "crm": {
            "authorize_url": f"{crm.base}/oauth/authorize",
            "token_url": f"{crm.base}/oauth/token",
            "client_id": "platform",
            "client_secret": "client-secret",
            "scopes": ["contacts.read"],
        }
    }
    make_member(acme, "alice")
    make_member(acme, "bob")
    manifest = {
        "name": "crm_tools",
        "egress": [crm.base],
        "connections": {"crm": {"provider": "crm", "scopes": ["contacts.read"]}},
        "routes": {
            "POST /lookup": {"handler": "lookup.py", "auth": "user"},
            "POST /uncaught": {"handler": "uncaught.py", "auth": "user"},
        },
        "mcp": {
            "tools": [
                {
                    "name": "lookup",
                    "route": "POST /uncaught",
                    "description": "Look a contact up",
                    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}},
                }
            ]
        },
    }
    deploy(acme, manifest, {"lookup.py": HANDLER, "uncaught.py": UNCAUGHT})
    return acme


def _connect_in_console(username: str, crm, token: str) -> None:
    from django.contrib.auth import get_user_model

    browser = Client()
    browser.force_login(get_user_model().objects.get(username=username))
    page = browser.get("/console/acme/accounts/")
    assert page.status_code == 200 and b"Connect crm" in page.content
    started = browser.post("/console/acme/accounts/crm/connect")
    assert started.status_code == 302
    location = urlsplit(started["Location"])
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert location.path == "/oauth/authorize"
    assert query["code_challenge_method"] == "S256" and query["scope"] == "contacts.read"
    crm.tokens[f"code-{username}"] = (token, query["code_challenge"])  # the provider signs the member in
    back = browser.get(
        "/console/acme/accounts/callback", {"code": f"code-{username}", "state": query["state"]}
    )
    assert back.status_code == 302


def _call(make_token, username: str, crm, route: str = "lookup") -> dict:
    _, raw = make_token(Tenant.objects.get(slug="acme"), username)
    response = Client().post(
        f"/t/acme/apps/crm_tools/{route}",
        data={"url": f"{crm.base}/me"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    return response.json()


def test_each_member_calls_with_their_own_token(app, crm, make_token):
    _connect_in_console("alice", crm, "token-alice")
    row = OutboundConnection.all_tenants.get()
    assert "token-alice" not in row.access_sealed  # sealed at rest
    # The fake API echoes the Authorization header: the handler sees it scrubbed, the API got it.
    assert _call(make_token, "alice", crm) == {"seen": "Bearer [secret]"}
    assert crm.seen[-1].headers["authorization"] == "Bearer token-alice"
    refused = _call(make_token, "bob", crm)
    assert refused["retryable"] is False
    assert refused["refused"].startswith("connect your crm account first: ")
    assert "/console/acme/accounts/" in refused["refused"]
    _connect_in_console("bob", crm, "token-bob")
    _call(make_token, "bob", crm)
    _call(make_token, "alice", crm)
    assert [s.headers["authorization"] for s in crm.seen if s.path == "/me"] == [
        "Bearer token-alice",
        "Bearer token-bob",
        "Bearer token-alice",
    ]


def test_a_token_close_to_expiry_is_refreshed_first(app, crm, make_token):
    _connect_in_console("alice", crm, "token-alice")
    OutboundConnection.all_tenants.update(expires_at=timezone.now() + timedelta(seconds=5))
    _call(make_token, "alice", crm)
    assert crm.seen[-1].headers["authorization"] == "Bearer fresh-r-token-alice"


def test_a_member_disconnects_and_an_admin_revokes(app, crm, make_token, make_member):
    from django.contrib.auth import get_user_model

    _connect_in_console("alice", crm, "token-alice")
    row = OutboundConnection.all_tenants.get()
    bob = Client()
    bob.force_login(get_user_model().objects.get(username="bob"))
    assert bob.post(f"/console/acme/accounts/{row.pk}/revoke").status_code == 404  # not bob's
    admin = Client()
    admin.force_login(get_user_model().objects.get(username="admin"))
    assert b"Revoke crm for alice" in admin.get("/console/acme/accounts/").content
    assert admin.post(f"/console/acme/accounts/{row.pk}/revoke").status_code == 302
    assert "connect your crm account first" in _call(make_token, "alice", crm)["refused"]


def test_a_callback_with_another_state_connects_nothing(app, crm):
    from django.contrib.auth import get_user_model

    browser = Client()
    browser.force_login(get_user_model().objects.get(username="alice"))
    browser.post("/console/acme/accounts/crm/connect")
    crm.tokens["code-x"] = ("token-x", "whatever")
    browser.get("/console/acme/accounts/callback", {"code": "code-x", "state": "forged"})
    assert not OutboundConnection.all_tenants.exists()


def test_an_mcp_call_without_a_connection_is_an_error_result_with_the_link(app, crm, make_token):
    _, raw = make_token(app, "bob")

    async def main():
        async with connect("acme", raw) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            name = next(n for n in listed if n.endswith("lookup"))
            return await client.call_tool(name, {"url": f"{crm.base}/me"})

    result = anyio.run(main)
    assert result.is_error
    text = result.content[0].text
    assert "connect your crm account first" in text and "/console/acme/accounts/" in text


def test_a_job_runs_with_no_member_connection(app, crm):
    from apps_runtime.dispatch import RouteCall, load_app, run_route
    from apps_runtime.jobs.principals import job_principal

    _connect_in_console("alice", crm, "token-alice")
    loaded = load_app(app, "crm_tools")
    route = loaded.compiled.routes.match("POST", "/lookup")[0]
    principal = job_principal(app.pk, "crm_tools", "sync", "user")
    result = run_route(RouteCall(loaded, route, principal, body={"url": crm.base}))
    assert "runs as a service principal" in result.body["refused"]
    assert not any(s.path == "/" for s in crm.seen)
