"""Code mode (run_code) through the official MCP client in both protocol eras, over the demo tenant."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import anyio
import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from mcp import MCPError
from mcp.types import ElicitResult

from apps_runtime.models import Record
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call import calls
from mcp_gateway.transport.in_process import connect
from tenants import actions
from tenants.models import Tenant
from tests.apps_runtime.sandbox.test_attacks import ATTACKS, EXPECTED, PRELUDE
from tests.mcp_gateway.conftest import mcp_client

pytestmark = pytest.mark.django_db(transaction=True)

ERAS = ["legacy", "2026-07-28"]
CALLS_SOURCE = Path(calls.__file__)
RUN = "acme_run_code"


@pytest.fixture
def demo():
    call_command("seed_demo", stdout=StringIO())
    return Tenant.objects.get(slug="acme")


@pytest.fixture
def token(demo, make_token):
    return lambda username, **kw: make_token(demo, username, **kw)[1]


def run_code(raw: str, code: str, mode: str = "legacy", **options):
    async def main():
        async with connect("acme", raw, mode=mode, **options) as client:
            return await client.call_tool(RUN, {"code": code})

    return anyio.run(main)


TWO_STEP = """
found = tools.call("acme_case_portal_find_case", {"query": "C-10"})["result"]
result = []
for case in found:
    if case["status"] == "open":
        full = tools.call("acme_case_portal_get_case", {"case_id": case["id"]})
        result.append({"reference": case["reference"], "client": full["client_name"]})
print(len(found), "found")
"""


@pytest.mark.parametrize("mode", ERAS)
def test_a_two_step_script_returns_the_joined_result_with_an_inner_audit_row_per_call(token, mode):
    result = run_code(token("reader"), TWO_STEP, mode)
    assert result.is_error is False, result.content
    value = result.structured_content
    assert value["result"] == [
        {"reference": "C-1001", "client": "Ada Lovelace"},
        {"reference": "C-1002", "client": "Alan Turing"},
    ]
    assert value["output"] == "3 found\n"
    assert [c["tool"] for c in value["calls"]] == [
        "acme_case_portal_find_case",
        "acme_case_portal_get_case",
        "acme_case_portal_get_case",
    ]
    assert {c["outcome"] for c in value["calls"]} == {"ok"}
    parent = ToolCallAudit.all_tenants.get(wire_name=RUN)
    assert parent.outcome == "ok" and parent.call_id
    inner = ToolCallAudit.all_tenants.filter(parent_call_id=parent.call_id).order_by("created_at")
    assert [row.wire_name for row in inner] == [c["tool"] for c in value["calls"]]
    assert {row.user_id for row in inner} == {parent.user_id}


ESCALATE = "acme_case_portal_escalate_case"
TRY_ESCALATE = """
case = tools.call("acme_case_portal_find_case", {"query": "C-1001"})["result"][0]
try:
    result = tools.call("acme_case_portal_escalate_case", {"case_id": case["id"], "reason": "urgent"})
except ToolError as err:
    result = "refused: " + str(err)
"""


def escalated() -> int:
    return Record.objects.filter(tenant__slug="acme", collection="cases", data__escalated=True).count()


@pytest.mark.parametrize("mode", ERAS)
def test_a_readers_script_calling_a_writer_only_tool_gets_tool_error_and_nothing_runs(token, mode):
    result = run_code(token("reader"), TRY_ESCALATE, mode)

    assert result.is_error is False, result.content
    assert result.structured_content["result"].startswith(f"refused: Unknown tool: {ESCALATE}.")
    assert [c["outcome"] for c in result.structured_content["calls"]] == ["ok", "denied"]
    assert escalated() == 0
    assert ToolCallAudit.all_tenants.filter(wire_name=ESCALATE, outcome="denied").count() == 1


@pytest.mark.parametrize("mode", ERAS)
def test_a_read_only_tokens_script_reads_but_cannot_write(token, mode):
    raw = token("writer", read_only=True)
    script = """
cases = tools.call("acme_records_query", {"app": "case_portal", "collection": "cases"})["items"]
try:
    new = {"app": "case_portal", "collection": "cases", "data": {"client_name": "X"}}
    tools.call("acme_records_create", new)
except ToolError as err:
    print(err)
result = len(cases)
"""
    result = run_code(raw, script, mode)

    assert result.is_error is False, result.content
    assert result.structured_content["result"] == 3
    assert result.structured_content["output"].startswith("Unknown tool: acme_records_create.")
    assert Record.objects.filter(tenant__slug="acme", collection="cases").count() == 3


@pytest.mark.parametrize(("username", "sees_escalate"), [("reader", False), ("writer", True)])
def test_tools_search_shows_only_the_callers_tools(token, username, sees_escalate):
    script = "result = [t['name'] for t in tools.search('escalate a case', limit=20)]"

    result = run_code(token(username), script)

    names = result.structured_content["result"]
    assert "acme_case_portal_find_case" in names
    assert (ESCALATE in names) is sees_escalate
    assert result.structured_content["calls"][0]["tool"] == "acme_search_tools"


@pytest.mark.parametrize("mode", ERAS)
def test_an_exception_in_the_script_is_an_error_with_the_scripts_own_traceback(token, mode):
    result = run_code(token("reader"), "print('before')\nx = 1\ny = x / 0\n", mode)

    assert result.is_error is True
    error = result.structured_content["error"]
    assert error.splitlines() == [
        "Traceback (most recent call last):",
        '  File "<code>", line 3, in <module>',
        "    y = x / 0",
        "ZeroDivisionError: division by zero",
    ]
    assert result.structured_content["output"] == "before\n"


# The sandbox attack suite's cases that need nothing from the test's host, as scripts: each must be
# blocked exactly as it is for a handler at the tier this host runs.
SCRIPT_ATTACKS = sorted(
    {
        "read_own_environment", "read_the_zygote_environment", "read_pid_1_environment", "read_etc_passwd",
        "import_django", "write_into_the_bundle", "tcp_connect_to_postgresql", "tcp_connect_to_redis",
        "fork", "exec_a_shell", "run_a_command_with_os_system", "create_a_user_namespace",
        "signal_the_zygote", "ptrace_the_zygote", "open_the_zygotes_memory", "raise_own_memory_limit",
        "exhaust_file_descriptors", "exhaust_threads",
    }
)  # fmt: skip


@pytest.mark.parametrize("attack", SCRIPT_ATTACKS)
def test_sandbox_attacks_fail_in_a_script_as_they_do_in_a_handler(token, attack):
    from apps_runtime.sandbox import get_sandbox

    script = PRELUDE + f"\nbody = {{}}\nresult = _outcome({ATTACKS[attack]})\n"

    result = run_code(token("reader"), script)

    expected = EXPECTED[attack][get_sandbox().tier_level - 1]
    assert result.is_error is False, result.content
    outcome = result.structured_content["result"]
    assert outcome["open"] is False, outcome
    if expected != "blocked":
        assert outcome["errno"] == expected, outcome


INTROSPECTION = {
    # The raw channel the tools object holds carries only code mode's two operations.
    "forged_records_op": "tools._transport('records.query', {'collection': 'cases'})",
    # The runner's frames and globals are the script's own process: nothing of the platform's.
    "platform_modules": "__import__('mcp_gateway')",
    "django_via_subclasses": (
        "[c for c in ().__class__.__base__.__subclasses__() if 'django' in c.__module__][0]"
    ),
    "exec_a_platform_module": f"exec(open({str(CALLS_SOURCE)!r}).read())",
}


@pytest.mark.parametrize("escape", sorted(INTROSPECTION))
def test_introspection_escapes_fail(token, escape):
    result = run_code(token("reader"), f"result = {INTROSPECTION[escape]}")

    assert result.is_error is True
    assert result.structured_content["calls"] == []
    last = result.structured_content["error"].splitlines()[-1]
    assert last.startswith(("ModuleNotFoundError", "IndexError", "FileNotFoundError", "PermissionError")) or (
        "unknown operation 'records.query'" in last
    ), last


def test_an_infinite_loop_stops_at_the_time_limit_and_the_server_stays_healthy(token, settings):
    settings.CODE_MODE_TIMEOUT_MS = 500
    raw = token("reader")

    result = run_code(raw, "while True:\n    pass\n")

    assert result.is_error is True
    assert "ran out of time (500 ms)" in result.content[0].text and "err_" in result.content[0].text
    assert run_code(raw, "result = 1 + 1").structured_content["result"] == 2
    assert ToolCallAudit.all_tenants.filter(wire_name=RUN, outcome="handler_failed").count() == 1


def test_a_call_flood_stops_at_the_cap(token, settings):
    settings.CODE_MODE_MAX_CALLS = 5
    script = """
n = 0
try:
    while True:
        tools.call("acme_collections_list")
        n += 1
except ToolError as err:
    result = [n, str(err)]
"""
    result = run_code(token("reader"), script)

    assert result.structured_content["result"] == [5, "more than 5 tool calls in one run"]
    assert len(result.structured_content["calls"]) == 5
    assert ToolCallAudit.all_tenants.filter(wire_name="acme_collections_list").count() == 5


def test_print_output_is_bounded(token, settings):
    settings.CODE_MODE_MAX_OUTPUT_CHARS = 10
    result = run_code(token("reader"), "for i in range(1000):\n    print('line', i)\n")

    assert result.structured_content["output"] == "line 0\nlin\n[output cut at 10 characters]"


class User:
    """The person behind the client: answers every confirmation the same way."""

    def __init__(self, action: str, content: dict | None = None):
        self.answer = ElicitResult(action=action, content=content)
        self.asked: list = []

    async def __call__(self, context, params):
        self.asked.append((params, await sync_to_async(escalated)()))
        return self.answer


def run_code_served(url: str, raw: str, code: str, mode: str, **options):
    """Over the live server: a question to the client needs the request's stream."""

    async def main():
        async with mcp_client(url, raw, mode=mode, **options) as client:
            return await client.call_tool(RUN, {"code": code})

    return anyio.run(main)


@pytest.mark.parametrize("mode", ERAS)
def test_a_confirm_tool_in_a_script_runs_only_after_the_clients_yes(mcp_url, token, mode):
    user = User("accept", {"confirm": True})

    result = run_code_served(mcp_url(), token("writer"), TRY_ESCALATE, mode, elicitation_callback=user)

    assert result.is_error is False, result.content
    assert isinstance(result.structured_content["result"], dict), result.structured_content
    assert result.structured_content["result"]["escalated"] is True
    assert len(user.asked) == 1
    question, escalated_when_asked = user.asked[0]
    assert ESCALATE in question.message and escalated_when_asked == 0
    assert escalated() == 1
    assert ToolCallAudit.all_tenants.get(wire_name=ESCALATE).outcome == "confirmed"


@pytest.mark.parametrize("mode", ERAS)
def test_a_declined_confirm_tool_in_a_script_raises_tool_error(mcp_url, token, mode):
    user = User("decline")

    result = run_code_served(mcp_url(), token("writer"), TRY_ESCALATE, mode, elicitation_callback=user)

    assert result.structured_content["result"].startswith("refused: The user declined")
    assert escalated() == 0


@pytest.mark.parametrize("mode", ERAS)
def test_a_confirm_tool_in_a_script_is_refused_when_the_client_cannot_be_asked(mcp_url, token, mode):
    result = run_code_served(mcp_url(), token("writer"), TRY_ESCALATE, mode)  # no elicitation capability

    assert "cannot ask for it" in result.structured_content["result"]
    assert escalated() == 0


def test_code_mode_off_hides_run_code_and_refuses_it(demo, token):
    actions.set_tenant_setting(demo, "codeMode", False, acting_user=None)
    raw = token("reader")

    async def main():
        async with connect("acme", raw) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            try:
                await client.call_tool(RUN, {"code": "result = 1"})
            except MCPError as err:
                return names, err.error.message
            return names, None

    names, refused = anyio.run(main)
    assert RUN not in names
    assert refused == f"Unknown tool: {RUN}. Code mode is switched off for this tenant (setting codeMode)."


README = Path(__file__).resolve().parents[2] / "docs" / "code-mode.md"


def readme_example() -> str:
    text = README.read_text()
    start = text.index("<!-- code-mode-example -->\n```python\n") + len(
        "<!-- code-mode-example -->\n```python\n"
    )
    return text[start : text.index("\n```\n", start) + 1]


@pytest.mark.parametrize("mode", ERAS)
def test_the_readme_example_runs_verbatim_over_the_demo(token, mode):
    result = run_code(token("reader"), readme_example(), mode)

    assert result.is_error is False, result.content
    value = result.structured_content
    assert value["output"] == "2 open of 3\n"
    assert [(case["reference"], case["status"]) for case in value["result"]] == [
        ("C-1001", "open"),
        ("C-1002", "open"),
    ]
    assert all(case["id"] for case in value["result"])
    assert len(value["calls"]) == 3
