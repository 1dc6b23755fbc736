"""Every answered tool call has its audit row committed, under concurrency and across a crash."""

from __future__ import annotations

import itertools
import threading
import time

import anyio
import httpx2
import pytest
from django.db import transaction
from django.utils import timezone

from mcp_gateway.audit_log import AuditRecord, arguments_hash, record_call
from mcp_gateway.models import ToolCallAudit
from tenants.callers import Caller
from tenants.models import ApiToken
from tests.mcp_gateway.conftest import mcp_client
from tests.support import mcp_wire as wire
from tests.support.platform_process import PlatformProcess, migrated_database

CLIENTS = 8
CALLS_EACH = 4


def test_every_answered_call_of_concurrent_clients_has_its_row_committed(mcp_url, acme, deploy, make_token):
    deploy(acme)
    row, raw = make_token(acme, "reader")
    # Noted as just used, so no request writes the token's row mid-flood: pytest-django's in-memory
    # SQLite locks a table being written against every reader ("database table is locked"), where
    # the platform's own SQLite (a WAL file) and PostgreSQL let readers through.
    ApiToken.all_tenants.filter(pk=row.pk).update(last_used_at=timezone.now())
    answered: list[dict] = []

    async def client(n: int) -> None:
        async with mcp_client(mcp_url(), raw) as mcp:
            for i in range(CALLS_EACH):
                arguments = {"query": f"client {n} call {i}"}
                result = await mcp.call_tool("acme_cases_find_case", arguments)
                assert result.is_error is False
                answered.append(arguments)

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for n in range(CLIENTS):
                tasks.start_soon(client, n)

    anyio.run(main)

    committed = set(
        ToolCallAudit.objects.for_tenant(acme)
        .filter(wire_name="acme_cases_find_case", outcome="ok")
        .values_list("arguments_sha256", flat=True)
    )
    assert len(answered) == CLIENTS * CALLS_EACH
    assert {arguments_hash(a) for a in answered} <= committed


@pytest.mark.django_db
def test_inside_a_callers_transaction_the_row_commits_and_rolls_back_with_it(acme):
    caller = Caller(tenant_id=acme.pk, is_member=True)

    with pytest.raises(RuntimeError), transaction.atomic():
        record_call(caller, "rolled_back", {}, outcome="ok", duration_ms=1.0)
        assert ToolCallAudit.objects.for_tenant(acme).filter(wire_name="rolled_back").exists()
        raise RuntimeError("the caller's work failed")

    assert not ToolCallAudit.objects.for_tenant(acme).exists()


def test_arguments_with_a_lone_surrogate_are_hashed_not_refused():
    assert len(arguments_hash({"text": "\ud800"})) == 64
    assert arguments_hash({"text": "é"}) != arguments_hash({"text": "e"})


@pytest.mark.slow
def test_no_answered_call_loses_its_row_when_the_server_is_killed_mid_flood(tmp_path):
    database = migrated_database(tmp_path)
    platform = PlatformProcess(tmp_path, database.url)
    try:
        token = platform.seed()[0]["tokens"]["reader"]
        platform.start()
        answered = flood_until_killed(platform, token)
        stored = platform.python(
            "import json; from mcp_gateway.models import ToolCallAudit; "
            "print(json.dumps(list(ToolCallAudit.all_tenants.values_list('arguments_sha256', flat=True))))"
        )
    finally:
        platform.stop()
        database.drop()

    assert len(answered) >= KILL_AFTER
    assert {arguments_hash(arguments) for arguments in answered} <= set(stored)


KILL_AFTER = 40


def flood_until_killed(platform: PlatformProcess, token: str) -> list[dict]:
    """Calls from several threads; SIGKILL the server once KILL_AFTER are answered. The answered ones."""
    url = f"{platform.base_url}/t/acme/mcp"
    answered: list[dict] = []
    killed = threading.Event()

    def caller(n: int) -> None:
        with httpx2.Client(timeout=30) as http:
            for i in itertools.count():
                arguments = {"query": f"flood {n}-{i}"}
                message = wire.request("tools/call", {"name": "acme_cases_find_case", "arguments": arguments})
                try:
                    response = http.post(
                        url, content=wire.encode(message), headers=wire.modern_headers(token, message)
                    )
                except httpx2.HTTPError:
                    return  # the server is gone: this call was never answered
                if killed.is_set():
                    return
                if (
                    response.status_code == 200
                    and wire.messages_in(response)[0]["result"]["isError"] is False
                ):
                    answered.append(arguments)

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120
    while len(answered) < KILL_AFTER and time.monotonic() < deadline:
        time.sleep(0.01)
    platform.kill()
    killed.set()
    for thread in threads:
        thread.join(timeout=60)
    return list(answered)


@pytest.mark.django_db
def test_a_row_reads_back_as_written(acme, make_member):
    user = make_member(acme, "writer").user
    caller = Caller(tenant_id=acme.pk, user_id=user.pk, is_member=True, oauth_client_id="client-1")
    before = timezone.now()

    record_call(caller, "acme_x_y", {"q": "é"}, outcome="tool_error", duration_ms=1.23456, app_version=3)

    row = ToolCallAudit.objects.for_tenant(acme).get()
    assert (row.user_id, row.token_id, row.oauth_client_id, row.wire_name) == (
        user.pk,
        None,
        "client-1",
        "acme_x_y",
    )
    assert (row.outcome, row.duration_ms, row.app_name, row.app_version, row.error_id) == (
        "tool_error",
        1.235,
        "",
        3,
        "",
    )
    assert row.arguments_sha256 == arguments_hash({"q": "é"})
    assert before <= row.created_at <= timezone.now()


def test_an_audit_record_says_what_its_row_will_say():
    record = AuditRecord()
    assert (record.outcome, record.recorded) == ("platform_error", True)  # a call that raised half-way
    record.ran("cases", 3)
    record.failed("err_01")
    assert (record.app_name, record.app_version, record.outcome, record.error_id) == (
        "cases",
        3,
        "handler_failed",
        "err_01",
    )
    record.refused(ToolCallAudit.Outcome.DECLINED)
    assert record.outcome == "declined"
    record.unrecorded()  # the call only asked for the user's yes
    assert record.recorded is False
