"""Code mode (run_code) through the official MCP client in both protocol eras, over the demo tenant."""

from __future__ import annotations

from io import StringIO

import anyio
import pytest
from django.core.management import call_command

from mcp_gateway.models import ToolCallAudit
from mcp_gateway.transport.in_process import connect
from tenants.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)

ERAS = ["legacy", "2026-07-28"]
RUN = "acme_run_code"


@pytest.fixture
def demo():
    call_command("seed_demo", stdout=StringIO())
    return Tenant.objects.get(slug="acme")


@pytest.fixture
def token(demo, make_token):
    return lambda username, **kw: make_token(demo, username, **kw)[1]


def run_code(raw: str, code: str, mode: str = "legacy", **options):
    async def main():
        async with connect("acme", raw, mode=mode, **options) as client:
            return await client.call_tool(RUN, {"code": code})

    return anyio.run(main)


TWO_STEP = """
found = tools.call("acme_case_portal_find_case", {"query": "C-10"})["result"]
result = [
    {"reference": c["reference"], "client": tools.call("acme_case_portal_get_case", {"case_id": c["id"]})["client_name"]}
    for c in found
    if c["status"] == "open"
]
print(len(found), "found")
"""


@pytest.mark.parametrize("mode", ERAS)
def test_a_two_step_script_returns_the_joined_result_with_an_inner_audit_row_per_call(token, mode):
    result = run_code(token("reader"), TWO_STEP, mode)
    assert result.is_error is False, result.content
    value = result.structured_content
    assert value["result"] == [
        {"reference": "C-1001", "client": "Ada Lovelace"},
        {"reference": "C-1002", "client": "Alan Turing"},
    ]
    assert value["output"] == "3 found\n"
    assert [c["tool"] for c in value["calls"]] == [
        "acme_case_portal_find_case",
        "acme_case_portal_get_case",
        "acme_case_portal_get_case",
    ]
    assert {c["outcome"] for c in value["calls"]} == {"ok"}
    parent = ToolCallAudit.all_tenants.get(wire_name=RUN)
    assert parent.outcome == "ok" and parent.call_id
    inner = ToolCallAudit.all_tenants.filter(parent_call_id=parent.call_id).order_by("created_at")
    assert [row.wire_name for row in inner] == [c["tool"] for c in value["calls"]]
    assert {row.user_id for row in inner} == {parent.user_id}
