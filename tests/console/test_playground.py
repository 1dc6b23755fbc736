"""The playground: a form from inputSchema, the call through the gateway's one path as the admin,
the result as a client gets it, its audit row, a failing handler's error record, the model's view."""

from __future__ import annotations

import pytest

from mcp_gateway.models import ToolCallAudit

pytestmark = pytest.mark.django_db
PLAY = "/console/acme/apps/cases/playground"


def test_the_form_comes_from_the_input_schema_and_shows_the_models_view(signed_in, acme, deploy):
    deploy(acme)
    page = signed_in("admin").get(PLAY, {"tool": "acme_cases_find_case"}).content.decode()
    assert 'name="arg:query"' in page and "(required)" in page
    assert "As a model sees it: about" in page and "&quot;inputSchema&quot;" in page
    assert '<option value="acme_cases_boom"' in page  # every tool of the app the admin may call


def test_a_call_runs_as_the_admin_and_shows_the_result_and_its_audit_row(signed_in, acme, deploy):
    deploy(acme)
    client = signed_in("admin")
    client.get("/console/acme/")  # no call yet
    created = client.post(PLAY, {"tool": "acme_cases_find_case", "arg:query": "nobody"})
    body = created.content.decode()
    assert created.status_code == 200 and "isError: false" in body
    assert "structuredContent" in body and "&quot;result&quot;: []" in body  # a list, wrapped
    row = ToolCallAudit.objects.for_tenant(acme).get()
    assert (row.wire_name, row.user.username, row.outcome) == ("acme_cases_find_case", "admin", "ok")
    assert 'id="audit-row"' in body and "<dd>ok</dd>" in body


def test_the_calls_checks_are_the_gateways(signed_in, acme, deploy):
    deploy(acme)
    answer = (
        signed_in("admin").post(PLAY, {"tool": "acme_cases_find_case", "arg:query": "x"}).content.decode()
    )
    assert "isError: true" in answer and "query" in answer  # minLength 2, as a client is told


def test_a_failing_handler_shows_its_error_record_with_the_traceback(signed_in, acme, deploy):
    deploy(acme)
    body = signed_in("admin").post(PLAY, {"tool": "acme_cases_boom"}).content.decode()
    assert "isError: true" in body and 'id="error-record"' in body
    trace = body[body.index('<pre id="traceback">') :].split("</pre>")[0]
    assert "RuntimeError" in trace and "server/boom.py" in trace
    row = ToolCallAudit.objects.for_tenant(acme).get()
    assert row.error_id and row.error_id in body


def test_members_get_no_playground(signed_in, acme, deploy):
    deploy(acme)
    assert signed_in("writer").get(PLAY).status_code == 404
    assert (
        signed_in("writer").post(PLAY, {"tool": "acme_cases_find_case", "arg:query": "ab"}).status_code == 404
    )
    assert signed_in("admin").get("/console/acme/apps/nope/playground").status_code == 404
    assert signed_in("admin").get(PLAY, {"tool": "acme_records_query"}).status_code == 404  # not this app's
