"""GET /api/tenants/<slug>/logs: what successful handler runs printed or logged, for the tenant's admins,
paged as the errors are, and bounded: per run, per app, per tenant and in time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps_runtime import retention
from apps_runtime.dispatch import load_app
from apps_runtime.models import CallLog
from apps_runtime.retention import purge, record_call_log
from tests.support.apps import HANDLERS, cases_manifest_plus

CHATTY = """
def handle(request):
    print("hello from", request.params["word"])
    request.log("info", "looked at " + request.params["word"])
    return {"ok": True}
"""
QUIET = "def handle(request):\n    return {'quiet': True}\n"
ROUTES = {
    "GET /chatty/{word}": {"handler": "server/chatty.py", "auth": "user"},
    "GET /quiet": {"handler": "server/quiet.py", "auth": "user"},
}


@pytest.fixture(autouse=True)
def _fresh_trim_counters():
    """Each test counts an app's writes from its first (app ids come again after a rollback)."""
    retention._call_log_writes.clear()


@pytest.fixture
def admin_api(acme, api_client, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


@pytest.fixture
def chatty(acme, deploy, client, make_token):
    """The cases app with a route that prints and logs; ``call(word)`` runs it as the writer."""
    files = {**HANDLERS, "server/chatty.py": CHATTY, "server/quiet.py": QUIET}
    deploy(acme, cases_manifest_plus(ROUTES, []), files)
    _, raw = make_token(acme, "writer")

    def call(path: str) -> None:
        answer = client.get(f"/t/acme/apps/cases{path}", HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert answer.status_code in (200, 500), answer.content

    return call


def test_a_successful_runs_logs_are_listed_for_admins_and_paged_from_a_cursor(admin_api, chatty):
    assert admin_api.get("/api/tenants/acme/logs").json() == {"logs": [], "cursor": "0"}
    chatty("/quiet")  # logs nothing: no row
    chatty("/chatty/one")
    chatty("/boom")  # a failure: its logs are in its error record, not here
    chatty("/chatty/two")

    first = admin_api.get("/api/tenants/acme/logs").json()
    assert [entry["route_key"] for entry in first["logs"]] == ["GET /chatty/{word}"] * 2
    entry = first["logs"][0]
    assert entry["app"] == "cases" and entry["version_number"] == 1
    assert entry["caller"] == "writer" and entry["status"] == 200
    assert "hello from one" in entry["logs"] and "[info] looked at one" in entry["logs"]

    assert admin_api.get("/api/tenants/acme/logs", {"since": first["cursor"]}).json()["logs"] == []
    chatty("/chatty/three")
    newer = admin_api.get("/api/tenants/acme/logs", {"since": first["cursor"]}).json()
    assert [e["logs"].splitlines()[0] for e in newer["logs"]] == ["hello from three"]
    assert int(newer["cursor"]) > int(first["cursor"])
    assert admin_api.get("/api/tenants/acme/logs", {"app": "other"}).json()["logs"] == []
    assert admin_api.get("/api/tenants/acme/logs", {"limit": "0"}).status_code == 400


def test_only_the_tenants_admins_read_its_logs(
    acme, chatty, api_client, make_tenant, make_member, make_token
):
    chatty("/chatty/secret")
    _, writer = make_token(acme, "writer")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {writer}")
    assert api_client.get("/api/tenants/acme/logs").status_code == 403

    other = make_tenant("globex")
    make_member(other, "boss", admin=True)
    _, boss = make_token(other, "boss")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {boss}")
    assert api_client.get("/api/tenants/acme/logs").status_code in (403, 404)
    assert api_client.get("/api/tenants/globex/logs").json()["logs"] == []


def test_logs_are_capped_per_run_per_app_and_per_tenant_and_expire(
    acme, admin_api, chatty, settings, monkeypatch
):
    monkeypatch.setattr(retention, "CALL_LOG_TRIM_EVERY", 1)  # each write applies the caps
    settings.RETENTION_CALL_LOG_BYTES = 12
    chatty("/chatty/abcdefghijklmnop")
    kept = admin_api.get("/api/tenants/acme/logs").json()["logs"][-1]["logs"]
    assert kept.startswith("hello from a") and "[log truncated: " in kept and "looked at" not in kept

    settings.RETENTION_CALL_LOG_BYTES = 4096
    settings.RETENTION_CALL_LOGS_PER_APP = 2
    for word in ("a", "b", "c"):
        chatty(f"/chatty/{word}")
    listed = admin_api.get("/api/tenants/acme/logs").json()["logs"]
    assert [e["logs"].splitlines()[0] for e in listed] == ["hello from b", "hello from c"]

    settings.RETENTION_CALL_LOGS_PER_APP = 200
    settings.RETENTION_CALL_LOGS_PER_TENANT = 1
    chatty("/chatty/d")
    assert [e["logs"].splitlines()[0] for e in admin_api.get("/api/tenants/acme/logs").json()["logs"]] == [
        "hello from d"
    ]

    CallLog.objects.for_tenant(acme).update(created_at=timezone.now() - timedelta(hours=25))
    assert purge(timezone.now())["call_logs"] == 1
    assert not CallLog.objects.for_tenant(acme).exists()


def test_no_logs_are_kept_when_turned_off(acme, admin_api, chatty, settings):
    settings.RETENTION_CALL_LOG_BYTES = 0
    chatty("/chatty/one")
    assert admin_api.get("/api/tenants/acme/logs").json()["logs"] == []


def test_a_chatty_app_passes_its_cap_by_less_than_one_trim_interval_and_the_purge_applies_it(
    acme, chatty, settings, monkeypatch
):
    monkeypatch.setattr(retention, "CALL_LOG_TRIM_EVERY", 4)
    settings.RETENTION_CALL_LOGS_PER_APP = 3
    app = load_app(acme, "cases").app
    counts = []
    for n in range(12):
        record_call_log(app=app, version_number=1, route_key="GET /x", caller="w", status=200, logs=f"{n}\n")
        counts.append(CallLog.objects.for_tenant(acme).count())
    assert max(counts) <= 3 + 4 - 1 and counts[-1] > 3  # trimmed, but not on every write
    assert purge(timezone.now())["call_logs"] == counts[-1] - 3
    kept = CallLog.objects.for_tenant(acme).order_by("id").values_list("logs", flat=True)
    assert list(kept) == ["9\n", "10\n", "11\n"]


def test_the_platform_admin_lists_call_logs_and_changes_none(acme, chatty, client):
    chatty("/chatty/one")
    client.force_login(get_user_model().objects.create_superuser("boss", password=None))
    page = client.get("/admin/apps_runtime/calllog/")
    assert page.status_code == 200 and "GET /chatty/{word}" in page.content.decode()
    row = CallLog.objects.for_tenant(acme).get()
    assert client.post(f"/admin/apps_runtime/calllog/{row.pk}/delete/", {"post": "yes"}).status_code == 403


@pytest.mark.parametrize("path", ["logs", "errors", "runs", "audit/outbound"])
def test_a_nul_in_a_filter_is_refused_not_a_server_error(admin_api, path):
    answer = admin_api.get(f"/api/tenants/acme/{path}", {"app": "a\x00b"})
    assert answer.status_code == 400, answer.content
    assert answer.json()["errors"] == {"app": ["no NUL characters"]}
