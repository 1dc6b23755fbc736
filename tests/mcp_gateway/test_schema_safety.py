"""Schemas stored before the deploy refused remote references, and catastrophic patterns, over MCP.

The deploy validator now refuses a ``$ref`` that leaves the document, so these tests write the
dangerous schema straight into the stored version, as a deploy before that rule could have.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import uuid

import anyio
import pytest

from apps_runtime.models import App, Tool
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.transport.in_process import connect
from tenants.actions import bump_state_version
from tests.support.apps import cases_manifest
from tests.support.reference_servers import SECRET, RecordingServer, SilentListener

# In process (mcp_gateway.transport.in_process): handlers read the test's rows from other threads.
pytestmark = pytest.mark.django_db(transaction=True)

ERROR_ID = re.compile(r"err_[0-9A-Z]{26}")
CALL_SECONDS = 20  # a fetch of a URL that never answers would block far longer


@pytest.fixture
def app(acme, deploy):
    deploy(acme)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username: make_token(app, username)[1]


def call(slug, raw, name, arguments):
    async def main():
        with anyio.fail_after(CALL_SECONDS):
            async with connect(slug, raw) as client:
                return await client.call_tool(name, arguments)

    return anyio.run(main)


def stored_as_before_the_fix(tenant, edit) -> None:
    """Apply ``edit`` to the active manifest (and its tool rows) in the database, skipping the deploy."""
    app = App.objects.for_tenant(tenant).select_related("active_version").get(name="cases")
    version = app.active_version
    manifest = copy.deepcopy(version.manifest)
    edit(manifest)
    version.manifest = manifest
    # A fresh key for the per-process cache of compiled versions.
    version.content_hash = hashlib.sha256(uuid.uuid4().bytes).hexdigest()
    version.save(update_fields=["manifest", "content_hash"])
    for row in Tool.objects.for_tenant(tenant).filter(app=app):
        spec = next(tool for tool in manifest["mcp"]["tools"] if tool["name"] == row.name)
        row.descriptor = {**row.descriptor, "inputSchema": spec["inputSchema"]}
        row.descriptor["outputSchema"] = spec.get("outputSchema")
        row.save(update_fields=["descriptor"])
    bump_state_version(tenant)


def tool(manifest: dict, name: str) -> dict:
    return next(t for t in manifest["mcp"]["tools"] if t["name"] == name)


def assert_error_id_only(result) -> str:
    assert result.is_error is True
    text = result.content[0].text
    assert ERROR_ID.search(text), text
    assert SECRET not in text
    return text


def test_a_file_reference_in_a_stored_input_schema_is_never_read(app, token, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"const": SECRET}))

    def edit(manifest):
        tool(manifest, "echo")["inputSchema"]["properties"]["count"] = {"$ref": secret.as_uri()}

    stored_as_before_the_fix(app, edit)
    result = call("acme", token("reader"), "acme_cases_echo", {"thing": "w", "count": 3})
    text = assert_error_id_only(result)
    assert str(tmp_path) not in text
    assert ToolCallAudit.objects.for_tenant(app).get().outcome == "invalid_arguments"  # the route never ran


def test_a_url_in_a_stored_input_schema_is_never_fetched_and_does_not_hold_the_call(app, token):
    with SilentListener() as silent:

        def edit(manifest):
            tool(manifest, "echo")["inputSchema"]["properties"]["count"] = {"$ref": silent.url}

        stored_as_before_the_fix(app, edit)
        result = call("acme", token("reader"), "acme_cases_echo", {"thing": "w", "count": 3})
        assert not silent.was_contacted()
    assert_error_id_only(result)


def test_a_file_reference_in_a_stored_output_schema_is_never_read(app, token, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"const": SECRET}))

    def edit(manifest):
        tool(manifest, "bad_output")["outputSchema"]["properties"]["count"] = {"$ref": secret.as_uri()}

    stored_as_before_the_fix(app, edit)
    result = call("acme", token("reader"), "acme_cases_bad_output", {})
    assert "outputSchema" in assert_error_id_only(result)


def test_records_of_a_collection_whose_stored_schema_has_a_url_are_checked_without_fetching(app, token):
    with RecordingServer() as server:

        def edit(manifest):
            manifest["collections"]["cases"]["schema"]["properties"]["reference"] = {"$ref": server.url}

        stored_as_before_the_fix(app, edit)
        result = call(
            "acme",
            token("writer"),
            "acme_records_create",
            {"app": "cases", "collection": "cases", "data": {"client_name": "Ada", "reference": "r-1"}},
        )
    assert server.paths == []
    assert_error_id_only(result)


def test_a_catastrophic_pattern_checks_a_long_argument_and_answers(acme, deploy, make_token):
    manifest = cases_manifest()
    tool(manifest, "echo")["inputSchema"]["properties"]["thing"]["pattern"] = "^(a+)+$"
    deploy(acme, manifest)
    _, raw = make_token(acme, "reader")
    # Python's re backtracks 2**40 times on this argument: years. Answering at all is the proof.
    result = call("acme", raw, "acme_cases_echo", {"thing": "a" * 40 + "!"})
    assert result.is_error is True
    assert "/thing: " in result.content[0].text and "does not match" in result.content[0].text
    passing = call("acme", raw, "acme_cases_echo", {"thing": "a" * 40})
    assert passing.is_error is False
