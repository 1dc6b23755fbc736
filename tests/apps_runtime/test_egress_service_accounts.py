"""The tenant's service accounts (docs/egress.md): a tenant admin connects one account per provider at
a fake OAuth provider (authorization code + PKCE, from the console or begun through the API); a
scheduled job and an agent running as ``service`` carry its token, and the outbound audit says so; a
member's call never does (they carry their own or get the connect link); revoking it stops it at once.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agents import definitions
from agents.runs import start_run
from apps_runtime.jobs import execute, schedule
from apps_runtime.models import Job, JobRun, OutboundConnection, OutboundRequest
from tests.agents.conftest import call, run_now, script
from tests.support.fake_services import start_fake_service

User = get_user_model()

LOOKUP = """
from platform_sdk import EgressRefused

def handle(request):
    try:
        r = request.http.get(request.body["url"], connection="crm")
    except EgressRefused as e:
        return {"refused": e.rule}
    return {"seen": r["json"]["headers"].get("authorization")}
"""
SYNC = """
from platform_sdk import EgressRefused

def handle(request):
    try:
        request.http.get("%s/sync", connection="crm")
    except EgressRefused as e:
        return {"refused": e.rule}
    return {"synced": True}
"""
TOOL = "acme_crm_tools_lookup"
AGENTS = itertools.count(1)
FIRST_TICK = datetime.fromisoformat("2030-01-01T11:00:07+00:00")


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
    settings.AGENT_PROVIDERS = {"local": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}}
    make_member(acme, "alice")
    make_member(acme, "bob")
    manifest = {
        "name": "crm_tools",
        "egress": [crm.base],
        "connections": {"crm": {"provider": "crm", "scopes": ["contacts.read"]}},
        "routes": {
            "POST /lookup": {"handler": "lookup.py", "auth": "user"},
            "POST /jobs/sync": {"handler": "sync.py", "auth": "internal"},
        },
        "jobs": {"sync": {"route": "POST /jobs/sync", "schedule": "*/15 * * * *", "runAs": "role:syncer"}},
        "mcp": {
            "tools": [
                {
                    "name": "lookup",
                    "route": "POST /lookup",
                    "description": "Look a contact up",
                    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}},
                }
            ]
        },
    }
    deploy(acme, manifest, {"lookup.py": LOOKUP, "sync.py": SYNC % crm.base})
    Job.objects.for_tenant(acme).update(active_since=datetime.fromisoformat("2030-01-01T10:02:00+00:00"))
    definitions.set_provider_key(acme, "local", "sk-test-key", acting_user=None)
    return acme


def browser(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _sign_in_at_provider(client: Client, authorize_url: str, crm, token: str) -> None:
    """The provider signs the person in and answers the console's callback with a code."""
    location = urlsplit(authorize_url)
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert location.path == "/oauth/authorize" and query["code_challenge_method"] == "S256"
    assert query["redirect_uri"].endswith("/console/acme/accounts/callback")
    crm.tokens[f"code-{token}"] = (token, query["code_challenge"])
    back = client.get("/console/acme/accounts/callback", {"code": f"code-{token}", "state": query["state"]})
    assert back.status_code == 302


def connect_service_in_console(crm, token: str = "token-service", admin: str = "admin") -> None:
    client = browser(admin)
    assert b"Connect a crm service account" in client.get("/console/acme/accounts/").content
    started = client.post("/console/acme/accounts/crm/connect-service")
    assert started.status_code == 302
    _sign_in_at_provider(client, started["Location"], crm, token)


def connect_member_in_console(username: str, crm, token: str) -> None:
    client = browser(username)
    started = client.post("/console/acme/accounts/crm/connect")
    _sign_in_at_provider(client, started["Location"], crm, token)


def run_scheduled_job(tenant) -> None:
    """The job's next due quarter hour, dispatched and run as the worker runs it."""
    tick = FIRST_TICK + timedelta(minutes=15 * JobRun.objects.for_tenant(tenant).count())
    [run_id] = schedule.dispatch_due_jobs(tick)
    execute.execute_run(run_id)


def member_call(tenant, make_token, username: str, crm) -> dict:
    _, raw = make_token(tenant, username)
    response = Client().post(
        "/t/acme/apps/crm_tools/lookup",
        data={"url": f"{crm.base}/me"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    return response.json()


def authorizations(crm, path: str) -> list[str | None]:
    return [s.headers.get("authorization") for s in crm.seen if urlsplit(s.path).path == path]


@pytest.mark.django_db
def test_a_scheduled_job_carries_the_service_account_an_admin_connected(app, crm):
    run_scheduled_job(app)
    assert authorizations(crm, "/sync") == []  # nothing connected: refused before any request
    refused = OutboundRequest.objects.for_tenant(app).get()
    assert refused.outcome == "refused" and "no tenant admin has connected a crm service account" in (
        refused.refusal
    )
    assert "/console/acme/accounts/" in refused.refusal

    connect_service_in_console(crm)
    row = OutboundConnection.all_tenants.get()
    assert row.user is None and row.connected_by.username == "admin" and row.connected_at is not None
    assert "token-service" not in row.access_sealed  # sealed at rest
    run_scheduled_job(app)
    assert authorizations(crm, "/sync") == ["Bearer token-service"]
    used = OutboundRequest.objects.for_tenant(app).order_by("-created_at", "-id").first()
    assert (used.outcome, used.connection, used.account) == ("ok", "crm", "service")
    assert used.caller == "job:crm_tools/sync"


def lookup_by_agent(tenant, crm, username: str, **agent_fields) -> None:
    fields = {"name": f"crm{next(AGENTS)}", "provider": "local", "model": "scripted", "runners": "user"}
    agent = definitions.create_agent(tenant, {**fields, **agent_fields}, acting_user=None)
    model = script(call(TOOL, url=f"{crm.base}/me"), "done")
    run = run_now(start_run(tenant, agent, User.objects.get(username=username), "look it up"), model)
    assert run.status == "completed"


@pytest.mark.django_db
def test_a_service_agent_carries_the_service_account_and_a_member_agent_the_members_own(app, crm):
    connect_service_in_console(crm)
    connect_member_in_console("alice", crm, "token-alice")
    lookup_by_agent(app, crm, "bob", run_as="service", service_roles=[])
    lookup_by_agent(app, crm, "alice")  # runs as its starter: alice's own account
    lookup_by_agent(app, crm, "bob")  # bob has none: the connect link, never the service account
    assert authorizations(crm, "/me") == ["Bearer token-service", "Bearer token-alice"]
    rows = OutboundRequest.objects.for_tenant(app).order_by("created_at", "id")
    assert [(r.outcome, r.account, r.caller.split(":")[0]) for r in rows] == [
        ("ok", "service", "agent"),
        ("ok", "member", "alice"),
        ("refused", "member", "bob"),
    ]
    assert rows[2].refusal.startswith("connect your crm account first: ")


@pytest.mark.django_db
def test_a_members_call_never_carries_the_service_account(app, crm, make_token):
    connect_service_in_console(crm)
    for username in ("admin", "bob"):  # the admin who connected it is a member like any other here
        refused = member_call(app, make_token, username, crm)["refused"]
        assert refused.startswith("connect your crm account first: ") and "/console/acme/accounts/" in refused
    assert authorizations(crm, "/me") == []
    connect_member_in_console("bob", crm, "token-bob")
    assert member_call(app, make_token, "bob", crm) == {"seen": "Bearer [secret]"}
    assert authorizations(crm, "/me") == ["Bearer token-bob"]


@pytest.mark.django_db
def test_admins_connect_list_and_revoke_through_the_api(app, crm, api_client, make_token):
    _, raw = make_token(app, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    [listed] = api_client.get("/api/tenants/acme/service-accounts").json()
    assert listed["provider"] == "crm" and listed["apps"] == ["crm_tools"] and listed["connected"] is False

    started = api_client.post("/api/tenants/acme/service-accounts/crm/connect")
    assert started.status_code == 201 and started.json()["expires_in"] > 0
    # The answer comes back to the console, in a browser signed in as the admin who began it.
    _sign_in_at_provider(browser("admin"), started.json()["authorize_url"], crm, "token-api")
    [listed] = api_client.get("/api/tenants/acme/service-accounts").json()
    assert listed["connected"] is True and listed["connected_by"] == "admin"
    assert listed["connected_at"] and listed["scopes"] == ["contacts.read"]
    assert "token-api" not in api_client.get("/api/tenants/acme/service-accounts").content.decode()
    run_scheduled_job(app)
    assert authorizations(crm, "/sync") == ["Bearer token-api"]
    audit = api_client.get("/api/tenants/acme/audit/outbound").json()
    assert (audit[0]["connection"], audit[0]["account"], audit[0]["outcome"]) == ("crm", "service", "ok")

    assert api_client.delete("/api/tenants/acme/service-accounts/crm").status_code == 204
    assert api_client.delete("/api/tenants/acme/service-accounts/crm").status_code == 404
    run_scheduled_job(app)
    assert authorizations(crm, "/sync") == ["Bearer token-api"]  # revoked: no request made
    assert "no tenant admin has connected" in OutboundRequest.objects.for_tenant(app).first().refusal
    assert api_client.post("/api/tenants/acme/service-accounts/nope/connect").status_code == 404


@pytest.mark.django_db
def test_members_may_not_connect_or_revoke_a_service_account(app, crm, api_client, make_token):
    _, raw = make_token(app, "bob")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/service-accounts").status_code == 403
    assert api_client.post("/api/tenants/acme/service-accounts/crm/connect").status_code == 403
    bob = browser("bob")
    assert b"service account" not in bob.get("/console/acme/accounts/").content
    assert bob.post("/console/acme/accounts/crm/connect-service").status_code in (403, 404)
    connect_service_in_console(crm)
    row = OutboundConnection.all_tenants.get()
    assert bob.post(f"/console/acme/accounts/{row.pk}/revoke").status_code == 404
    assert api_client.delete("/api/tenants/acme/service-accounts/crm").status_code == 403
    assert OutboundConnection.all_tenants.filter(pk=row.pk).exists()
    admin = browser("admin")
    assert b"Revoke the crm service account" in admin.get("/console/acme/accounts/").content
    assert admin.post(f"/console/acme/accounts/{row.pk}/revoke").status_code == 302
    assert not OutboundConnection.all_tenants.exists()


@pytest.mark.django_db
def test_only_the_admin_who_began_it_finishes_a_service_account_connection(app, crm, make_member):
    make_member(app, "other_admin", admin=True)
    started = browser("admin").post("/console/acme/accounts/crm/connect-service")["Location"]
    for someone in ("other_admin", "bob"):  # the state leaked: the provider's code is no use to them
        _sign_in_at_provider(browser(someone), started, crm, f"token-{someone}")
    forged = browser("admin")
    crm.tokens["code-x"] = ("token-x", "whatever")
    forged.get("/console/acme/accounts/callback", {"code": "code-x", "state": "svc.forged"})
    assert not OutboundConnection.all_tenants.exists()
