"""Every tool call leaves an audit row however it ends, even when a handler attacks the host after writing."""

from __future__ import annotations

import re

import anyio
import pytest

from apps_runtime.models import HandlerError, Record
from mcp_gateway.models import ToolCallAudit
from tests.mcp_gateway.conftest import mcp_client

ERROR_ID = re.compile(r"err_[0-9A-HJKMNP-TV-Z]{26}")

# Writes a record, then sends the host a frame nested 100,000 deep on the protocol socket (fd 3).
ATTACK = """
import os, struct

def handle(request):
    request.records.create("notes", {"text": "written before the attack"})
    payload = b"[" * 100000 + b"]" * 100000
    os.write(3, struct.pack(">I", len(payload)) + payload)
    os.read(3, 1)  # wait for the host to end the call
"""
TOOL = {
    "description": "Writes a note, then sends a deeply nested frame.",
    "inputSchema": {"type": "object", "properties": {}},
}
MANIFEST = {
    "name": "notes",
    "access": "user",
    "collections": {
        "notes": {
            "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "read": "user",
            "write": "user",
        }
    },
    "routes": {
        "POST /attack": {"handler": "server/attack.py", "auth": "user"},
        "GET /ok": {"handler": "server/ok.py", "auth": "user"},
    },
    "mcp": {
        "tools": [
            {"name": "attack", "route": "POST /attack", **TOOL},
            {"name": "ok", "route": "GET /ok", **TOOL},
        ]
    },
}
FILES = {"server/attack.py": ATTACK, "server/ok.py": "def handle(request):\n    return {'ok': True}\n"}


@pytest.fixture
def member_token(mcp_url, make_tenant, make_member, make_token, deploy):
    tenant = make_tenant("acme")
    make_member(tenant, "mallory")
    deploy(tenant, MANIFEST, FILES)
    return tenant, make_token(tenant, "mallory")[1]


def call_both(url: str, raw: str):
    async def main():
        async with mcp_client(url, raw) as client:
            attacked = await client.call_tool("acme_notes_attack", {})
            return attacked, await client.call_tool("acme_notes_ok", {})

    return anyio.run(main)


def test_a_handler_that_writes_then_sends_a_deeply_nested_frame_is_audited_with_an_error_id(
    mcp_url, member_token
):
    tenant, raw = member_token

    attacked, after = call_both(mcp_url(), raw)

    assert attacked.is_error is True
    text = attacked.content[0].text
    assert ERROR_ID.search(text) and "Recursion" not in text and "Traceback" not in text
    assert after.structured_content == {"ok": True}  # the same session keeps serving
    audit = ToolCallAudit.objects.for_tenant(tenant).get(wire_name="acme_notes_attack")
    assert audit.outcome == ToolCallAudit.Outcome.HANDLER_FAILED
    assert audit.error_id == ERROR_ID.search(text).group() and audit.app_name == "notes"
    assert HandlerError.objects.for_tenant(tenant).get(error_id=audit.error_id).kind == "handler_error"
    assert Record.objects.for_tenant(tenant).count() == 1  # what it wrote stays, and the audit says who
