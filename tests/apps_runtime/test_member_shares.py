"""Issue 35 section 4: what one member can take from the others of their tenant.

Through MCP tool calls (the in-process SDK client) as two members of one tenant: a member whose
handler queues runs with large bodies, or many runs, stops at their share of the tenant's storage
quota and enqueue caps, and the other member's enqueues still all succeed; an ended run drops its
body; a handler failure whose message holds a lone surrogate keeps its error record, readable
through the API; and a member flooding failures cannot evict another member's error records.

Each test measures the other member's service before and during the flood, as a ratio (1.0: the
flood took nothing from them); ``MEASURED`` keeps the figures for the report (``-s`` prints them).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps_runtime.jobs import execute
from apps_runtime.models import HandlerError, JobRun
from mcp_gateway.transport.in_process import connect

pytestmark = pytest.mark.django_db(transaction=True)

MEASURED: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_measured():
    """Print the measured ratios once the module's tests have run (visible with ``-s``)."""
    yield
    for what, ratio in MEASURED.items():
        print(f"{what}: {ratio:.2f}")


ROOT = Path(__file__).resolve().parents[2]
# The handler is the example of docs/jobs.md ("Member shares and the storage quota"), as written.
FILL = (ROOT / "docs" / "jobs.md").read_text().split("catch the refusal, as in")[1].split("```python\n")[1]
FILL = FILL.split("```")[0]

BOOM = """
def handle(request):
    if request.body.get("surrogate"):
        raise RuntimeError("a lone surrogate: " + chr(0xD800) + " and a NUL: " + chr(0))
    raise RuntimeError("plain failure")
"""


def _tool(name: str, route: str, properties: dict) -> dict:
    return {
        "name": name,
        "description": f"Test tool {name}, which calls {route}.",
        "route": route,
        "inputSchema": {"type": "object", "properties": properties, "additionalProperties": False},
    }


MANIFEST = {
    "name": "shares",
    "access": "user",
    "routes": {
        "POST /fill": {"handler": "server/fill.py", "auth": "user"},
        "POST /boom": {"handler": "server/boom.py", "auth": "user"},
        "POST /jobs/hold": {"handler": "server/hold.py", "auth": "internal"},
    },
    "mcp": {
        "tools": [
            _tool("fill", "POST /fill", {"count": {"type": "integer"}, "size": {"type": "integer"}}),
            _tool("boom", "POST /boom", {"surrogate": {"type": "boolean"}}),
        ]
    },
}
FILES = {
    "server/fill.py": FILL,
    "server/boom.py": BOOM,
    "server/hold.py": "def handle(request):\n    return {'held': len(request.body.get('pad', ''))}\n",
}


@pytest.fixture
def shares(acme, deploy, make_token):
    """The app in acme, and a token each for a plain member (the flooder) and the admin (the other)."""
    deploy(acme, MANIFEST, FILES)
    return {"flooder": make_token(acme, "member")[1], "other": make_token(acme, "admin")[1]}


@pytest.fixture
def held(monkeypatch) -> list[str]:
    """Runs stay queued (their tasks are collected, not sent): the state a busy queue holds them in."""
    sent: list[str] = []
    monkeypatch.setattr(
        "apps_runtime.jobs.queue.runs._send", lambda run_id, countdown, parent=None: sent.append(run_id)
    )
    return sent


def call(bearer: str, tool: str, arguments: dict):
    async def main():
        async with connect("acme", bearer) as client:
            return await client.call_tool(f"acme_shares_{tool}", arguments)

    return anyio.run(main)


def fill(bearer: str, count: int, size: int = 10) -> dict:
    result = call(bearer, "fill", {"count": count, "size": size})
    assert not result.is_error, result
    return result.structured_content


def test_a_member_queuing_large_bodies_stops_at_their_share_of_the_storage_quota(shares, held, settings):
    """Issue 35: 100 runs x 1 MB a call stored 300 MB in 35 s; now bodies count against one quota."""
    settings.TENANT_STORAGE_QUOTA_BYTES = 400_000  # a member's share: 100,000 bytes (25 %)
    body = 30_000
    before = fill(shares["other"], 3, body)["queued"] / 3
    for run_id in list(held):
        execute.execute_run(run_id)
    ended = JobRun.all_tenants.filter(status="succeeded")
    assert ended.count() == 3 and all(r.body == {} and r.body_bytes == 0 for r in ended)  # bodies dropped

    flood = fill(shares["flooder"], 100, body)
    assert flood["queued"] == 3  # 3 x 30 kB fit in 100 kB, a fourth does not
    assert "your share of this workspace's storage" in flood["refusal"]
    assert "job bodies, task results and error records" in flood["refusal"]
    during = fill(shares["other"], 3, body)["queued"] / 3

    MEASURED["storage: other member's enqueue success, during / before"] = during / before
    assert before == 1.0 and during / before == 1.0


def test_a_member_queuing_many_runs_stops_at_their_share_of_the_enqueue_caps(shares, held, settings):
    """Issue 35: one member's handler took the tenant's 300 runs a minute; the admin's enqueue was refused."""
    settings.JOBS_MAX_RUNS_PER_TENANT_PER_MINUTE = 40  # a member's share: 10 a minute
    before = fill(shares["other"], 5)["queued"] / 5

    flood = fill(shares["flooder"], 40)
    assert flood["queued"] == 10
    assert flood["refusal"] == (
        "you already queued 10 background runs in the last minute, your share of this tenant's runs a minute"
    )
    during = fill(shares["other"], 5)["queued"] / 5

    MEASURED["enqueue rate: other member's enqueue success, during / before"] = during / before
    assert before == 1.0 and during / before == 1.0
    assert JobRun.all_tenants.filter(member__startswith="user:").count() == 20


def test_a_lone_surrogate_in_a_handlers_message_keeps_its_error_record(
    shares, acme, client, api_client, make_token, caplog
):
    """Issue 35: the record was lost and the call answered a platform fault (-32603 / 500)."""
    plain = call(shares["other"], "boom", {})
    failed = call(shares["other"], "boom", {"surrogate": True})

    # The normal handler-failure answer, like any failing handler's: an error result with its id.
    assert plain.is_error and failed.is_error
    text = failed.content[0].text
    error_id = next(word.strip("().,") for word in text.split() if word.startswith("err_"))
    admin = {"HTTP_AUTHORIZATION": f"Bearer {make_token(acme, 'admin')[1]}"}
    record = api_client.get(f"/api/tenants/acme/errors/{error_id}", **admin)
    assert record.status_code == 200
    assert "a lone surrogate: \\ud800 and a NUL: \\x00" in record.json()["trace"]
    console = Client()
    console.force_login(get_user_model().objects.get(username="admin"))
    page = console.get(f"/console/acme/errors/{error_id}")
    assert page.status_code == 200 and "a lone surrogate: \\ud800" in page.content.decode()

    # The front-end path answers it as it answers any handler failure, with the record kept.
    front = [
        client.post("/t/acme/apps/shares/boom", body, content_type="application/json", **admin)
        for body in ({}, {"surrogate": True})
    ]
    assert front[1].status_code == front[0].status_code
    assert front[1].json()["code"] == front[0].json()["code"] == "handler_error"  # not server_error
    kept = front[1].json()["errorId"]
    assert api_client.get(f"/api/tenants/acme/errors/{kept}", **admin).status_code == 200
    # The platform's own log lines (the host logs the handler's traceback) are UTF-8 too.
    assert any("a lone surrogate: \\ud800" in r.getMessage() for r in caplog.records)
    assert all(r.getMessage().encode("utf-8") for r in caplog.records)


def test_a_member_flooding_failures_cannot_evict_another_members_error_records(
    shares, acme, api_client, make_token, settings
):
    """Issue 35: the newest 1,000 were kept per tenant, so one member's flood evicted the real ones."""
    settings.RETENTION_ERRORS_PER_TENANT = 12  # a member's share: 3
    others = [call(shares["other"], "boom", {}) for _ in range(3)]
    assert all(result.is_error for result in others)
    theirs = set(HandlerError.all_tenants.filter(caller="admin").values_list("error_id", flat=True))
    assert len(theirs) == 3

    for _ in range(15):
        assert call(shares["flooder"], "boom", {}).is_error

    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(acme, 'admin')[1]}")
    readable = {e for e in theirs if api_client.get(f"/api/tenants/acme/errors/{e}").status_code == 200}
    MEASURED["error records: other member's records kept, during / before"] = len(readable) / len(theirs)
    assert readable == theirs
    assert HandlerError.all_tenants.filter(caller="member").count() == 3  # the flooder keeps their newest 3
