"""The admin shows deployed apps, their tools and records, and changes them only through actions."""

import pytest
from django.contrib.auth import get_user_model

from apps_runtime.models import App, AppVersion, Record, Tool
from mcp_gateway.models import ToolCallAudit

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(get_user_model().objects.create_superuser("boss", password=None))
    return client


@pytest.fixture
def deployed(make_tenant, deploy):
    tenant = make_tenant("acme")
    deploy(tenant)
    return tenant


def test_deployed_rows_cannot_be_added_changed_or_deleted(admin_client, deployed):
    app = App.objects.for_tenant(deployed).get()
    record = Record.objects.create(tenant=deployed, app=app, collection="cases", record_id="r1", data={})
    audit = ToolCallAudit.objects.create(
        tenant=deployed, wire_name="acme_x", outcome="ok", duration_ms=1, arguments_sha256="0" * 64
    )
    rows = {
        "apps_runtime/app": app,
        "apps_runtime/appversion": AppVersion.objects.for_tenant(deployed).get(),
        "apps_runtime/tool": Tool.objects.for_tenant(deployed).first(),
        "apps_runtime/record": record,
        "mcp_gateway/toolcallaudit": audit,
    }
    for path, row in rows.items():
        assert admin_client.get(f"/admin/{path}/{row.pk}/change/").status_code == 200, path
        assert admin_client.post(f"/admin/{path}/{row.pk}/delete/", {"post": "yes"}).status_code == 403, path
        assert admin_client.get(f"/admin/{path}/add/").status_code == 403, path
    bulk = {"action": "delete_selected", "_selected_action": [app.pk], "post": "yes"}
    admin_client.post("/admin/apps_runtime/app/", bulk)
    assert App.objects.for_tenant(deployed).filter(pk=app.pk).exists()
    assert Record.objects.for_tenant(deployed).filter(pk=record.pk).exists()


def test_an_app_is_taken_down_in_the_admin_by_the_undeploy_action(admin_client, deployed):
    app = App.objects.for_tenant(deployed).get()
    before = deployed.state_version
    response = admin_client.post(
        "/admin/apps_runtime/app/", {"action": "undeploy", "_selected_action": [app.pk]}
    )
    assert response.status_code == 302
    app.refresh_from_db()
    deployed.refresh_from_db()
    assert app.active_version_id is None and deployed.state_version > before
    assert not Tool.objects.for_tenant(deployed).exists()
    assert AppVersion.objects.for_tenant(deployed).exists()


def test_the_sandbox_pool_page_shows_this_processs_warm_workers(admin_client, deployed):
    page = "/admin/apps_runtime/app/sandbox-pool/"
    assert page in admin_client.get("/admin/apps_runtime/app/").content.decode()

    def warm_calls() -> int:
        response = admin_client.get(page)
        assert response.status_code == 200
        counts = dict(response.context["counts"])
        assert {"workers", "idle", "busy", "starts"} <= set(counts)
        assert {"calls", "idle", "memory", "failure", "stray", "evicted", "drained"} <= dict(
            response.context["recycles"]
        ).keys()
        return counts["warm_calls"]

    before = warm_calls()
    assert admin_client.get("/t/acme/apps/cases/ping").status_code == 200
    assert warm_calls() == before + 1


def test_the_sandbox_pool_page_is_for_staff_only(client):
    response = client.get("/admin/apps_runtime/app/sandbox-pool/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
