"""The audit of a run_code call and its script's inner calls: linked on the console page and in the API."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call import calls as tool_calls
from tenants.callers import caller_for

pytestmark = pytest.mark.django_db(transaction=True)
SCRIPT = "tools.call('acme_collections_list')\nresult = tools.call('acme_cases_find_case', {'query': 'xy'})"


@pytest.fixture
def script_run(acme, deploy):
    deploy(acme)
    caller = caller_for(acme, get_user_model().objects.get(username="reader"))
    tool_calls.call_tool(acme, caller, "acme_collections_list", {})  # a call of its own, not linked
    result = tool_calls.call_tool(acme, caller, "acme_run_code", {"code": SCRIPT})
    assert result.is_error is False, result.content
    return ToolCallAudit.objects.for_tenant(acme).get(wire_name="acme_run_code")


def test_the_audit_page_links_a_run_code_call_and_its_inner_calls(signed_in, script_run):
    client = signed_in("admin")
    page = client.get("/console/acme/audit/").content.decode()
    assert f'href="?call={script_run.call_id}">its calls</a>' in page
    assert page.count(f'href="?call={script_run.call_id}">in run_code</a>') == 2

    linked = client.get("/console/acme/audit/", {"call": script_run.call_id}).content.decode()
    assert linked.count('<td><span class="tag') == 3  # run_code and its two inner calls only
    assert "acme_cases_find_case" in linked


def test_the_audit_api_names_each_inner_calls_parent(api_client, acme, make_token, script_run):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(acme, 'admin')[1]}")
    rows = api_client.get("/api/tenants/acme/audit").json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    parents = {row["wire_name"]: row["parent_call_id"] for row in rows}
    assert parents["acme_cases_find_case"] == script_run.call_id
    assert sorted(row["parent_call_id"] for row in rows if row["wire_name"] == "acme_collections_list") == [
        "",
        script_run.call_id,
    ]
    assert parents["acme_run_code"] == "" and script_run.call_id in {row["call_id"] for row in rows}
