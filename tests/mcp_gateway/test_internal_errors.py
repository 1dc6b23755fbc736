"""A platform fault during a call answers JSON-RPC -32603 with an error id, never the exception's text.

The faults are real database errors: a table the call needs is renamed away for the length of the call.
"""

from __future__ import annotations

import contextlib
import re

import anyio
import pytest
from django.db import connection
from mcp import MCPError
from mcp.types import INTERNAL_ERROR

from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client

INTERNAL = re.compile(r"^Internal error \(error id (err_[0-9A-HJKMNP-TV-Z]{26})\)$")
QUERY = {"app": "cases", "collection": "cases"}


@contextlib.contextmanager
def table_missing(model):
    """The model's table is gone (renamed) until the block ends."""
    table = model._meta.db_table
    with connection.schema_editor() as editor:
        editor.alter_db_table(model, table, f"{table}_away")
    try:
        yield table
    finally:
        with connection.schema_editor() as editor:
            editor.alter_db_table(model, f"{table}_away", table)


@pytest.fixture
def reader_token(mcp_url, acme, deploy, make_token):
    deploy(acme)
    return make_token(acme, "reader")[1]


def call_error(url: str, raw: str, name: str, arguments: dict, mode: str = "legacy"):
    async def main():
        async with mcp_client(url, raw, mode=mode) as client:
            try:
                await client.call_tool(name, arguments)
            except MCPError as err:  # caught inside: the client's task group would wrap it
                return err.error
        raise AssertionError(f"{name} did not raise a JSON-RPC error")

    return anyio.run(main)


def call(url: str, raw: str, name: str, arguments: dict):
    async def main():
        async with mcp_client(url, raw) as client:
            return await client.call_tool(name, arguments)

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_database_error_in_a_call_is_an_internal_error_with_an_error_id_and_is_audited(
    mcp_url, reader_token, acme, mode
):
    with table_missing(Record) as table:
        error = call_error(mcp_url(), reader_token, "acme_records_query", QUERY, mode)

    assert error.code == INTERNAL_ERROR
    match = INTERNAL.match(error.message)
    assert match and table not in error.message
    assert call(mcp_url(), reader_token, "acme_records_query", QUERY).is_error is False  # serving on
    audits = ToolCallAudit.objects.for_tenant(acme).filter(wire_name="acme_records_query")
    assert sorted(audits.values_list("outcome", "error_id")) == [
        (ToolCallAudit.Outcome.OK, ""),
        (ToolCallAudit.Outcome.PLATFORM_ERROR, match.group(1)),
    ]


def test_a_call_whose_audit_cannot_be_written_is_an_internal_error_with_an_error_id(mcp_url, reader_token):
    with table_missing(ToolCallAudit) as table:
        error = call_error(mcp_url(), reader_token, "acme_cases_listing", {})

    assert error.code == INTERNAL_ERROR
    assert INTERNAL.match(error.message) and table not in error.message
