"""The secrets API and deploy checks of what an app reaches: admins set, list and delete secrets and no
answer ever holds a value; a deploy warns for a declared secret that is not set and refuses a bad
egress entry or an unknown provider at its pointer; admins read the outbound audit.
"""

from __future__ import annotations

import pytest

from apps_runtime.models import TenantSecret

pytestmark = pytest.mark.django_db

VALUE = "value-that-no-answer-holds"
MANIFEST = {
    "name": "hooks",
    "egress": ["api.example.com", "*.example.org", "http://127.0.0.1:8700"],
    "secrets": ["API_KEY", "OTHER_KEY"],
    "routes": {"GET /x": {"handler": "x.py", "auth": "user"}},
}
FILES = {"x.py": "def handle(request):\n    return {}\n"}


@pytest.fixture
def admin(acme, api_client, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def test_admins_set_list_and_delete_secrets_and_never_read_a_value(acme, admin, deploy):
    deploy(acme, MANIFEST, FILES)
    put = admin.put("/api/tenants/acme/secrets/API_KEY", {"value": VALUE}, format="json")
    assert put.status_code == 200
    assert put.json()["name"] == "API_KEY" and put.json()["apps"] == ["hooks"]
    listing = admin.get("/api/tenants/acme/secrets")
    assert [row["name"] for row in listing.json()] == ["API_KEY"]
    assert set(listing.json()[0]) == {"name", "updated_at", "apps"}
    assert VALUE not in put.content.decode() + listing.content.decode()
    assert VALUE not in TenantSecret.all_tenants.get().sealed
    assert admin.delete("/api/tenants/acme/secrets/API_KEY").status_code == 204
    assert admin.delete("/api/tenants/acme/secrets/API_KEY").status_code == 404
    assert admin.get("/api/tenants/acme/secrets").json() == []


def test_a_bad_name_or_value_is_422(admin):
    assert admin.put("/api/tenants/acme/secrets/lower", {"value": "x"}, format="json").status_code in (
        400,
        422,
    )
    assert admin.put("/api/tenants/acme/secrets/API_KEY", {"value": ""}, format="json").status_code in (
        400,
        422,
    )


def test_members_may_not_touch_secrets(acme, api_client, make_token):
    _, raw = make_token(acme, "member")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/secrets").status_code == 403
    assert (
        api_client.put("/api/tenants/acme/secrets/API_KEY", {"value": "x"}, format="json").status_code == 403
    )
    assert api_client.get("/api/tenants/acme/audit/outbound").status_code == 403


def test_a_deploy_warns_for_each_declared_secret_that_is_not_set(acme, admin):
    admin.put("/api/tenants/acme/secrets/API_KEY", {"value": VALUE}, format="json")
    created = admin.post("/api/tenants/acme/apps", {"manifest": MANIFEST, "files": FILES}, format="json")
    assert created.status_code == 201, created.content
    warnings = created.json()["warnings"]
    assert any("/secrets/1" in str(w) and "OTHER_KEY is not set" in str(w) for w in warnings), warnings
    assert not any("API_KEY" in str(w) for w in warnings)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("https://api.example.com/path", "no path"),
        ("ftp://api.example.com", "http or https"),
        ("*.com", "one label under a domain"),
        ("api.*.example.com", "leading '*.'"),
        ("http://127.0.0.1:99999", "1 to 65535"),
        ("not a host", "host name"),
    ],
)
def test_a_bad_egress_entry_is_refused_at_its_pointer(admin, entry, message):
    manifest = {**MANIFEST, "egress": ["api.example.com", entry], "secrets": []}
    refused = admin.post("/api/tenants/acme/apps", {"manifest": manifest, "files": FILES}, format="json")
    assert refused.status_code == 422
    problems = {p["pointer"]: p["message"] for p in refused.json()["problems"]}
    assert message in problems["/egress/1"], problems


def test_a_connection_to_a_provider_the_operator_did_not_configure_is_refused(admin, settings):
    settings.OUTBOUND_OAUTH_PROVIDERS = {"crm": {}}
    manifest = {**MANIFEST, "secrets": [], "connections": {"chat": {"provider": "slack"}}}
    refused = admin.post("/api/tenants/acme/apps", {"manifest": manifest, "files": FILES}, format="json")
    assert refused.status_code == 422
    problems = {p["pointer"]: p["message"] for p in refused.json()["problems"]}
    assert (
        "not one of this platform's OUTBOUND_OAUTH_PROVIDERS (crm)" in problems["/connections/chat/provider"]
    )


def test_the_readmes_egress_example_deploys(acme, deploy, settings):
    """docs/egress.md's complete example (documented against GitHub's API, never called here) deploys."""
    import json
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "egress.md").read_text()
    section = page[page.index("<!-- egress example -->") :]
    manifest = json.loads(re.search(r"```json\n(.*?)\n```", section, re.S).group(1))
    handlers = re.findall(r"```python\n# (\w+\.py)[^\n]*\n(.*?)\n```", section, re.S)
    settings.OUTBOUND_OAUTH_PROVIDERS = {"github": {}}
    result = deploy(acme, manifest, dict(handlers))
    assert len(result.tools) == 2
    assert [str(w) for w in result.warnings] == [
        "/secrets/0: secret GITHUB_TOKEN is not set: requests that use it are refused until a tenant admin "
        "sets it (PUT /api/tenants/acme/secrets/GITHUB_TOKEN)"
    ]


def test_the_console_secrets_page_sets_lists_and_deletes_without_showing_a_value(acme, deploy):
    from django.contrib.auth import get_user_model
    from django.test import Client

    deploy(acme, MANIFEST, FILES)
    admin = Client()
    admin.force_login(get_user_model().objects.get(username="admin"))
    assert admin.post("/console/acme/secrets/set", {"name": "API_KEY", "value": VALUE}).status_code == 302
    page = admin.get("/console/acme/secrets/").content.decode()
    assert "API_KEY" in page and "hooks" in page and VALUE not in page
    member = Client()
    member.force_login(get_user_model().objects.get(username="member"))
    assert member.get("/console/acme/secrets/").status_code in (403, 404)
    assert member.post("/console/acme/secrets/API_KEY/delete").status_code in (403, 404)
    assert admin.post("/console/acme/secrets/API_KEY/delete").status_code == 302
    assert not TenantSecret.all_tenants.exists()


def test_outbound_audit_rows_are_kept_within_the_tenants_cap(acme, settings):
    from django.utils import timezone

    from apps_runtime.models import OutboundRequest
    from apps_runtime.retention import purge

    settings.RETENTION_OUTBOUND_PER_TENANT = 2
    for _ in range(3):
        OutboundRequest.objects.create(tenant=acme, method="GET", outcome="ok")
    assert purge(timezone.now())["outbound_requests"] == 1
    assert OutboundRequest.all_tenants.count() == 2
