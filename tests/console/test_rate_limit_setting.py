"""The tenant setting toolRateLimit on the console's settings page: typed as JSON text."""

from __future__ import annotations

import pytest

from tenants.models import Tenant

pytestmark = pytest.mark.django_db

LIMIT = {"calls": 30, "per": "minute", "scope": "tenant"}


def test_the_console_sets_the_limit_as_json_text(signed_in, acme):
    client = signed_in("admin")

    response = client.post(
        "/console/acme/settings/set",
        {"key": "toolRateLimit", "value": '{"calls": 30, "per": "minute", "scope": "tenant"}'},
    )
    refused = client.post("/console/acme/settings/set", {"key": "toolRateLimit", "value": '{"calls": 30}'})

    assert response.status_code == 302 and Tenant.objects.get(pk=acme.pk).setting("toolRateLimit") == LIMIT
    assert refused.status_code == 400 and "missing required key" in refused.content.decode()
    assert "Set toolRateLimit" in client.get("/console/acme/settings/").content.decode()
