"""What a deploy costs in queries: the same for 2 tools as for 300, into an empty tenant or a full one."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from apps_runtime.models import Tool

pytestmark = pytest.mark.django_db


def manifest(app: str, tools: int) -> tuple[dict, dict]:
    return (
        {
            "name": app,
            "routes": {"GET /items/{item_id}": {"handler": "server/get.py", "auth": "user"}},
            "mcp": {
                "tools": [
                    {
                        "name": f"tool_{i}",
                        "description": f"Get item number {i} of this app by its id.",
                        "route": "GET /items/{item_id}",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"item_id": {"type": "string", "description": f"Kind {i}."}},
                            "required": ["item_id"],
                        },
                        "annotations": {"readOnlyHint": True, "destructiveHint": False},
                    }
                    for i in range(tools)
                ]
            },
        },
        {"server/get.py": "def handle(request):\n    return {}\n"},
    )


def queries_of_deploy(tenant, app: str, tools: int) -> int:
    bundle = bundle_from_mapping(*manifest(app, tools))
    with CaptureQueriesContext(connection) as queries:
        deploy_bundle(tenant, bundle, acting_user=None)
    return len(queries.captured_queries)


def test_a_deploy_takes_the_same_queries_for_300_tools_into_a_full_tenant_as_for_2_into_an_empty_one(
    make_tenant,
):
    empty, full = make_tenant(), make_tenant()
    for n in range(3):
        deploy_bundle(full, bundle_from_mapping(*manifest(f"filler_{n}", 200)), acting_user=None)

    few = [queries_of_deploy(empty, "subject", 2) for _ in ("deploy", "redeploy")]
    many = [queries_of_deploy(full, "subject", 300) for _ in ("deploy", "redeploy")]

    assert many == few
    assert Tool.objects.for_tenant(full).count() == 900
    stored = Tool.objects.for_tenant(full).get(wire_name=f"{full.mcp_prefix}_subject_tool_299")
    assert (stored.position, stored.route_key) == (299, "GET /items/{item_id}")
    assert stored.descriptor["inputSchema"]["properties"]["item_id"]["description"] == "Kind 299."
