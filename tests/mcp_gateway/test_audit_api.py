"""The tool-call audit as a security team reads it: filters, the cursor, the JSON Lines export."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx2
import pytest
from django.utils import timezone

from mcp_gateway.audit_log import arguments_hash
from mcp_gateway.models import ToolCallAudit

# The served platform (ASGI) streams the export's async iterator; Django's test client, being
# synchronous, reads it whole and says so.
pytestmark = pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous")

SECRET_ARGUMENT = "zq-distinctive-argument-7731"
EXPORT_KEYS = {
    "class_uid",
    "class_name",
    "category_uid",
    "activity_id",
    "activity_name",
    "type_uid",
    "time",
    "duration",
    "severity_id",
    "status_id",
    "status",
    "status_detail",
    "metadata",
    "actor",
    "api",
    "resources",
    "cloud",
    "unmapped",
}


@pytest.fixture
def rows(acme, make_token, make_tenant, make_member):
    """Six rows of acme, oldest first (a minute apart), and one of another tenant."""
    reader_token, _ = make_token(acme, "reader")
    writer_token, _ = make_token(acme, "writer")
    users = {m.user.username: m.user for m in acme.memberships.select_related("user")}
    start = timezone.now() - timedelta(hours=1)
    made = []
    specs = [
        dict(user="reader", token=reader_token, wire_name="acme_cases_listing", app_name="cases"),
        dict(user="reader", token=reader_token, method="resources/read", wire_name="acme_cases_doc"),
        dict(user="writer", token=writer_token, wire_name="acme_cases_boom", outcome="handler_failed"),
        dict(
            user="writer", oauth_client_id="https://client.example/meta.json", wire_name="acme_cases_listing"
        ),
        dict(user="admin", agent_name="triage", agent_run_id="run_01", wire_name="acme_cases_listing"),
        dict(user="admin", method="prompts/get", wire_name="acme_cases_brief", outcome="denied"),
    ]
    for index, spec in enumerate(specs):
        spec = {"method": "tools/call", "outcome": "ok", "app_name": "", **spec}
        made.append(
            ToolCallAudit.objects.create(
                tenant=acme,
                user=users[spec.pop("user")],
                duration_ms=1.5,
                arguments_sha256=arguments_hash({"query": SECRET_ARGUMENT}),
                created_at=start + timedelta(minutes=index),
                **spec,
            )
        )
    other = make_tenant("other")
    make_member(other, "boss", admin=True)
    ToolCallAudit.objects.create(
        tenant=other, wire_name="other_secret_tool", outcome="ok", duration_ms=1, arguments_sha256="0" * 64
    )
    return made


@pytest.fixture
def admin(api_client, acme, make_token):
    _, raw = make_token(acme, "admin")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api_client


def listed(client, **query) -> list[dict]:
    response = client.get("/api/tenants/acme/audit", query)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def exported(client, **query) -> list[dict]:
    response = client.get("/api/tenants/acme/audit/export", query)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/jsonl"
    return [json.loads(line) for line in b"".join(response).decode().splitlines()]


def test_the_audit_lists_newest_first_with_method_credential_agent_and_run(admin, rows):
    found = listed(admin)
    assert [r["id"] for r in found] == [r.id for r in reversed(rows)]
    agent = next(r for r in found if r["agent"])
    assert (agent["agent"], agent["agent_run"], agent["method"]) == ("triage", "run_01", "tools/call")
    first = found[-1]
    assert first["token"] == rows[0].token.key_id and "token_id" not in first
    assert {r["method"] for r in found} == {"tools/call", "resources/read", "prompts/get"}
    assert found[2]["oauth_client_id"] == "https://client.example/meta.json"


@pytest.mark.parametrize(
    ("query", "picked"),
    [
        ({"method": "resources/read"}, [1]),
        ({"method": "prompts/get"}, [5]),
        ({"outcome": "handler_failed"}, [2]),
        ({"tool": "acme_cases_listing"}, [0, 3, 4]),
        ({"app": "cases"}, [0]),
        ({"member": "writer"}, [2, 3]),
        ({"connection": "https://client.example/meta.json"}, [3]),
        ({"agent": "triage"}, [4]),
        ({"run": "run_01"}, [4]),
        ({"member": "admin", "outcome": "ok"}, [4]),
    ],
)
def test_each_filter_picks_its_rows(admin, rows, query, picked):
    assert sorted(r["id"] for r in listed(admin, **query)) == sorted(rows[i].id for i in picked)


def test_the_token_filter_takes_the_public_key_id(admin, rows):
    wanted = rows[2].token.key_id
    assert sorted(r["id"] for r in listed(admin, token=wanted)) == [rows[2].id]


def test_the_time_range_filter_is_inclusive(admin, rows):
    since, until = rows[1].created_at.isoformat(), rows[3].created_at.isoformat()
    assert sorted(r["id"] for r in listed(admin, since=since, until=until)) == [r.id for r in rows[1:4]]


@pytest.mark.parametrize("query", [{"method": "tools/nope"}, {"outcome": "nope"}, {"since": "yesterday"}])
def test_a_bad_filter_is_a_400(admin, rows, query):
    assert admin.get("/api/tenants/acme/audit", query).status_code == 400
    assert admin.get("/api/tenants/acme/audit/export", query).status_code == 400


def test_the_cursor_walks_every_row_once_while_new_rows_arrive(admin, rows):
    response = admin.get("/api/tenants/acme/audit", {"limit": 2}).json()
    seen = [r["id"] for r in response["results"]]
    ToolCallAudit.objects.create(  # newer than every page: never shows up on the later pages
        tenant=rows[0].tenant, wire_name="late", outcome="ok", duration_ms=1, arguments_sha256="0" * 64
    )
    while response["next"]:
        response = admin.get(response["next"]).json()
        seen += [r["id"] for r in response["results"]]
    assert seen == [r.id for r in reversed(rows)]


def test_another_tenants_rows_never_appear(admin, rows):
    assert all(r["wire_name"] != "other_secret_tool" for r in listed(admin, limit=500))
    assert all(line["unmapped"]["tenant"] == "acme" for line in exported(admin))
    assert listed(admin, tool="other_secret_tool") == []


def test_only_tenant_admins_read_the_audit_and_its_export(api_client, rows, make_token):
    _, raw = make_token(rows[0].tenant, "writer")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/tenants/acme/audit").status_code == 403
    assert api_client.get("/api/tenants/acme/audit/export").status_code == 403
    api_client.credentials()
    assert api_client.get("/api/tenants/acme/audit/export").status_code in (401, 403)


def test_the_export_is_ocsf_api_activity_with_hashes_never_values(admin, rows):
    lines = exported(admin)
    assert [line["metadata"]["uid"] for line in lines] == [str(r.id) for r in rows]  # oldest first
    for line, row in zip(lines, rows, strict=True):
        assert set(line) == EXPORT_KEYS
        assert (line["class_uid"], line["category_uid"], line["type_uid"] // 100) == (6003, 6, 6003)
        assert line["api"]["operation"] == row.method
        assert line["unmapped"]["arguments_sha256"] == arguments_hash({"query": SECRET_ARGUMENT})
        assert line["time"] == int(row.created_at.timestamp() * 1000)
    assert lines[1]["activity_id"] == 2 and lines[0]["activity_id"] == 99  # a read; a tool call
    assert lines[0]["actor"]["user"] == {
        "uid": str(rows[0].user_id),
        "name": "reader",
        "credential_uid": rows[0].token.key_id,
    }
    assert lines[3]["actor"]["app_uid"] == "https://client.example/meta.json"
    assert (lines[2]["status_id"], lines[2]["status_detail"]) == (2, "handler_failed")
    assert (lines[4]["unmapped"]["agent"], lines[4]["unmapped"]["agent_run"]) == ("triage", "run_01")
    assert SECRET_ARGUMENT not in json.dumps(lines)


def test_the_export_takes_the_filters_and_since(admin, rows):
    lines = exported(admin, member="writer", since=rows[3].created_at.isoformat())
    assert [line["metadata"]["uid"] for line in lines] == [str(rows[3].id)]


def test_the_export_resumes_after_the_last_line_read(admin, rows, settings):
    settings.AUDIT_EXPORT_MAX_ROWS = 4  # a response stops there; the reader asks again
    first = exported(admin)
    assert [line["metadata"]["uid"] for line in first] == [str(r.id) for r in rows[:4]]
    rest = exported(admin, after=first[-1]["metadata"]["uid"])
    assert [line["metadata"]["uid"] for line in rest] == [str(r.id) for r in rows[4:]]
    assert exported(admin, after=rest[-1]["metadata"]["uid"]) == []
    assert admin.get("/api/tenants/acme/audit/export", {"after": "x1"}).status_code == 400


def test_the_export_streams_over_the_served_platform(live_url, transactional_db, acme, make_token):
    _, raw = make_token(acme, "admin")
    for index in range(3):
        ToolCallAudit.objects.create(
            tenant=acme, wire_name=f"tool_{index}", outcome="ok", duration_ms=1, arguments_sha256="0" * 64
        )
    headers = {"Authorization": f"Bearer {raw}", "Accept": "application/jsonl"}
    with httpx2.stream("GET", f"{live_url}/api/tenants/acme/audit/export", headers=headers) as response:
        assert response.status_code == 200
        lines = [json.loads(line) for line in response.iter_lines() if line]
    assert [line["resources"][0]["name"] for line in lines] == ["tool_0", "tool_1", "tool_2"]
