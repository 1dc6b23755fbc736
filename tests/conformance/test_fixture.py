"""The conformance fixture and proxy: the suite's fixed names come from the ordinary deploy path."""

from __future__ import annotations

import json

import pytest

from tests.conformance import proxy, seed, suite

# Every tool name the suite's required scenarios call (the README of the conformance fixture).
SUITE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
}


@pytest.mark.django_db
def test_the_fixture_tenant_serves_every_suite_tool_name_through_the_wire_name_rule():
    served = set(seed.seed()["tools"])

    suite_names = {proxy.RENAMED.get(name, name) for name in SUITE_TOOLS}
    assert suite_names <= served
    assert not set(proxy.RENAMED) & served  # the two one-underscore names only through the proxy


def test_the_proxy_maps_the_two_short_names_both_ways_and_nothing_else():
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_sampling"}}
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "test://static-text"}}

    assert (
        json.loads(proxy.renamed_request(json.dumps(call).encode()))["params"]["name"]
        == "test_sampling_create"
    )
    assert json.loads(proxy.renamed_request(json.dumps(read).encode())) == read  # the app test's own URI
    assert proxy.renamed_header(" test_elicitation ") == "test_elicitation_create"
    assert proxy.renamed_header("test://template/1/data") == "test://template/1/data"
    back = proxy.renamed_response(b'{"name":"test_sampling_create","uri":"test://static-text"}')
    assert back == b'{"name":"test_sampling","uri":"test://static-text"}'


def test_every_scenario_the_platform_does_not_pass_is_listed_with_its_reason():
    assert all(
        revision in suite.REVISIONS and reason.strip() for (revision, _), reason in suite.NOT_SERVED.items()
    )
