"""The OpenAPI schema builds without warnings and names the bearer-token scheme."""

from io import StringIO

import pytest
import yaml
from django.core.management import call_command


@pytest.mark.django_db
def test_the_schema_builds_without_warnings_and_declares_bearer_tokens(tmp_path):
    target = tmp_path / "schema.yml"
    err = StringIO()
    call_command("spectacular", "--fail-on-warn", "--file", str(target), stderr=err)
    assert "Warning" not in err.getvalue()
    schema = yaml.safe_load(target.read_text())
    assert schema["components"]["securitySchemes"]["bearerToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A tenant API token, lcp_...; it works only in the tenant it was issued for.",
    }
    settings_get = schema["paths"]["/api/tenants/{slug}/settings"]["get"]
    assert {"bearerToken": []} in settings_get["security"]
