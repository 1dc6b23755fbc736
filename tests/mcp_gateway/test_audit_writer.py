"""Audit rows are committed before the call is answered, one transaction for the rows of concurrent calls."""

from __future__ import annotations

import threading

import anyio
import pytest
from django.db import IntegrityError, transaction

from mcp_gateway.audit import arguments_hash, record_call
from mcp_gateway.models import ToolCallAudit
from tenants.callers import Caller
from tests.mcp_gateway.conftest import mcp_client

CLIENTS = 8
CALLS_EACH = 4


def test_every_answered_call_of_concurrent_clients_has_its_row_committed(mcp_url, acme, deploy, make_token):
    deploy(acme)
    raw = make_token(acme, "reader")[1]
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


def test_a_row_that_cannot_be_written_fails_its_own_call_and_no_other(transactional_db, acme):
    member = Caller(tenant_id=acme.pk, is_member=True)
    gone = Caller(tenant_id=acme.pk + 1000)  # no such tenant: the foreign key fails at commit
    outcomes: dict[str, object] = {}
    start = threading.Barrier(2)

    def write(label: str, caller: Caller) -> None:
        start.wait(timeout=10)
        try:
            record_call(caller, label, {}, outcome="ok", duration_ms=1.0)
            outcomes[label] = "committed"
        except IntegrityError as err:
            outcomes[label] = err

    threads = [
        threading.Thread(target=write, args=("good", member)),
        threading.Thread(target=write, args=("bad", gone)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert outcomes["good"] == "committed"
    assert isinstance(outcomes["bad"], IntegrityError)
    assert list(ToolCallAudit.all_tenants.values_list("wire_name", flat=True)) == ["good"]


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
