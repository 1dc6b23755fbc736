"""The tool option ``task`` and the long route time limits it allows, with their messages."""

import pytest

from apps_runtime.manifest import validate_manifest
from tests.apps_runtime.manifest.builders import FILES, edited, problems_of

SEARCH = "/routes/GET ~1cases~1search"
TOOL = "/mcp/tools/0"
TEN_MINUTES = 600_000


def messages(manifest: dict) -> dict[str, str]:
    return {problem.pointer: problem.message for problem in problems_of(manifest)}


@pytest.mark.parametrize("mode", ["optional", "required"])
def test_a_task_tool_deploys_and_its_route_may_take_minutes(mode):
    manifest = edited([(f"{TOOL}/task", mode), (f"{SEARCH}/timeoutMs", TEN_MINUTES)])
    assert validate_manifest(manifest, FILES) == []


def test_an_unknown_task_mode_names_the_choices():
    assert messages(edited([(f"{TOOL}/task", "always")]))[f"{TOOL}/task"] == (
        'must be one of "optional", "required", not "always"'
    )


def test_a_long_timeout_on_a_route_of_a_synchronous_tool_is_refused_naming_the_tool():
    found = messages(edited([(f"{SEARCH}/timeoutMs", TEN_MINUTES)]))
    assert found[f"{SEARCH}/timeoutMs"] == (
        "timeoutMs 600000 is over 30000, which only routes of task tools may be: "
        'set "task": "optional" or "required" on tool \'find_case\', or lower it'
    )


def test_a_long_timeout_on_a_route_no_tool_uses_is_refused():
    manifest = edited([(f"{SEARCH}/timeoutMs", TEN_MINUTES), ("/mcp/tools/0/route", "GET /cases/{case_id}")])
    assert "only routes of task tools" in messages(manifest)[f"{SEARCH}/timeoutMs"]


def test_a_route_shared_by_a_task_tool_and_a_synchronous_tool_keeps_the_ordinary_limit():
    second = edited([])["mcp"]["tools"][0] | {"name": "find_case_now"}
    manifest = edited(
        [(f"{TOOL}/task", "optional"), (f"{SEARCH}/timeoutMs", TEN_MINUTES), ("/mcp/tools/2", second)]
    )
    assert "on tool 'find_case_now'" in messages(manifest)[f"{SEARCH}/timeoutMs"]


def test_a_task_route_over_the_platform_limit_names_the_setting(settings):
    settings.TASK_MAX_TIMEOUT_MS = 120_000
    found = messages(edited([(f"{TOOL}/task", "required"), (f"{SEARCH}/timeoutMs", TEN_MINUTES)]))
    assert found[f"{SEARCH}/timeoutMs"] == (
        "timeoutMs 600000 is over this platform's limit for task tools (TASK_MAX_TIMEOUT_MS 120000): lower it"
    )


def test_no_route_may_exceed_the_absolute_ceiling():
    found = messages(edited([(f"{TOOL}/task", "required"), (f"{SEARCH}/timeoutMs", 3_600_001)]))
    assert found[f"{SEARCH}/timeoutMs"] == "3600001 is out of range: use a value from 100 to 3600000"
