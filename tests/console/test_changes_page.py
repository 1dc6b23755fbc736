"""The console's audit of changes: the API's filters, for tenant admins only."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from tenants import actions


def test_the_changes_page_lists_and_filters_what_people_did(signed_in, acme):
    boss = get_user_model().objects.get(username="admin")
    actions.set_tenant_setting(acme, "mcpServer", False, acting_user=boss)
    client = signed_in("admin")
    body = client.get("/console/acme/audit/changes/").content.decode()
    assert "setting.set" in body and "member.set" in body
    filtered = client.get("/console/acme/audit/changes/", {"area": "setting"}).content.decode()
    assert "setting.set" in filtered and "member.set" not in filtered
    assert client.get("/console/acme/audit/changes/", {"since": "nope"}).status_code == 400
    assert signed_in("writer").get("/console/acme/audit/changes/").status_code in (403, 404)
