"""The 2026-07-28 tasks extension (SEP-2663) end to end: the official SDK client against a live server."""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import MCPError

from mcp_gateway.models import ToolTask
from tests.mcp_gateway.conftest import mcp_client
from tests.support import tasks_extension as ext
from tests.support.task_app import TASK_FILES, task_manifest
from tests.support.task_client import list_tasks

SLOW = "acme_reports_slow_report"
QUICK = "acme_reports_quick"
ASKS = "acme_reports_confirm"
MODERN = "2026-07-28"
CONFIRM_FILE = """
from platform_sdk import elicit

FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def handle(request):
    first = request.ask({"sure": elicit("Sure?", FORM), "really": elicit("Really?", FORM)})
    answers = [(first[key].get("content") or {}).get("confirm") for key in ("sure", "really")]
    return {"content": [{"type": "text", "text": f"confirmed {answers}"}]}
"""


@pytest.fixture
def app(mcp_url, acme, deploy):
    manifest = task_manifest()
    manifest["routes"]["POST /confirm"] = {"handler": "server/confirm.py", "auth": "user"}
    manifest["mcp"]["tools"].append(
        {
            "name": "confirm",
            "description": "Asks two questions, then answers (a task when the client takes tasks).",
            "route": "POST /confirm",
            "inputSchema": {"type": "object"},
            "task": "optional",
        }
    )
    deploy(acme, manifest, {**TASK_FILES, "server/confirm.py": CONFIRM_FILE})
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kw: make_token(app, username, **kw)[1]


def tasks_client(url: str, token: str, **kwargs):
    return mcp_client(url, token, mode=MODERN, extensions=[ext.TasksClient()], **kwargs)


def run(fn):
    return anyio.run(fn)


async def started_and_ended(client, arguments: dict) -> tuple[ext.CreatedTask, dict]:
    """A task of the slow report tool, and the task once it has ended."""
    created = await client.session.call_tool(SLOW, arguments, allow_claimed=True)
    return created, await ext.wait_for(client.session, created.task_id)


def test_server_discover_advertises_the_extension_and_no_core_tasks_capability(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader, mode=MODERN) as client:
            return await client.session.send_request(types.DiscoverRequest(), types.DiscoverResult)

    capabilities = run(main).capabilities
    assert ext.EXTENSION in capabilities.extensions
    assert capabilities.tasks is None


def test_a_task_tool_called_with_the_extension_is_a_task_polled_to_its_inlined_result(mcp_url, token):
    reader = token("reader")

    async def main():
        async with tasks_client(mcp_url(), reader) as client:
            created, final = await started_and_ended(client, {"seconds": 0.2, "label": "q3"})
            resolved = await client.call_tool(QUICK, {})  # the claim resolver polls for the caller
            return created, final, resolved

    created, final, resolved = run(main)
    assert isinstance(created, ext.CreatedTask) and created.status == "working"
    assert created.ttl_ms > 0 and created.poll_interval_ms > 0
    assert final["status"] == "completed" and final["resultType"] == "complete"
    assert final["result"]["structuredContent"] == {"label": "q3", "slept": 0.2}
    assert "io.modelcontextprotocol/related-task" not in final["result"].get("_meta", {})
    assert resolved.structured_content == {"quick": True}


def test_a_tool_error_is_a_completed_task_whose_result_is_an_error(mcp_url, token):
    reader = token("reader")

    async def main():
        async with tasks_client(mcp_url(), reader) as client:
            return (await started_and_ended(client, {"seconds": 0, "label": "fail"}))[1]

    final = run(main)
    assert final["status"] == "completed"
    assert final["result"]["isError"] is True and "error" not in final


def test_a_task_asks_its_caller_and_tasks_update_delivers_the_answers_one_at_a_time(mcp_url, token):
    reader = token("reader")
    yes = {"action": "accept", "content": {"confirm": True}}

    async def never_asked(context, params):  # declares elicitation: the task's questions come by tasks/get
        raise AssertionError("a task's questions are not server requests")

    async def main():
        async with tasks_client(mcp_url(), reader, elicitation_callback=never_asked) as client:
            session = client.session
            created = await session.call_tool(ASKS, {}, allow_claimed=True)
            waiting = await ext.wait_for(session, created.task_id, "input_required")
            first_ack = await ext.update(session, created.task_id, {"sure": yes, "not-asked": {"x": 1}})
            half = await ext.get(session, created.task_id)
            await ext.update(session, created.task_id, {"really": yes})
            return waiting, first_ack, half, await ext.wait_for(session, created.task_id)

    waiting, first_ack, half, final = run(main)
    assert waiting["status"] == "input_required"
    assert set(waiting["inputRequests"]) == {"sure", "really"}
    assert waiting["inputRequests"]["sure"]["method"] == "elicitation/create"
    assert first_ack["resultType"] == "complete" and not {"taskId", "status"} & set(first_ack)
    assert half["status"] == "input_required" and set(half["inputRequests"]) == {"really"}
    assert final["status"] == "completed"
    assert final["result"]["content"][0]["text"] == "confirmed [True, True]"


def test_another_callers_task_handle_is_not_found_for_every_method(mcp_url, token):
    reader = token("reader")
    other_token = token("reader")

    async def main():
        async with tasks_client(mcp_url(), reader) as owner:
            created = await owner.session.call_tool(SLOW, {"seconds": 5, "label": "mine"}, allow_claimed=True)
            codes = []
            async with tasks_client(mcp_url(), other_token) as other:  # the same member, another token
                for send in (ext.get, ext.cancel):
                    with pytest.raises(MCPError) as raised:
                        await send(other.session, created.task_id)
                    codes.append(raised.value.error.code)
                with pytest.raises(MCPError) as raised:
                    await ext.update(other.session, created.task_id, {})
                codes.append(raised.value.error.code)
            still = await ext.get(owner.session, created.task_id)
            ack = await ext.cancel(owner.session, created.task_id)
            again = await ext.cancel(owner.session, created.task_id)  # already ended: the same ack
            return codes, still, ack, again, await ext.get(owner.session, created.task_id)

    codes, still, ack, again, cancelled = run(main)
    assert codes == [types.INVALID_PARAMS] * 3
    assert still["status"] == "working"
    assert ack["resultType"] == again["resultType"] == "complete"
    assert not {"taskId", "status", "result"} & (set(ack) | set(again))
    assert cancelled["status"] == "cancelled"


def test_the_2026_era_has_no_tasks_list_or_tasks_result_and_gates_the_rest_on_the_extension(mcp_url, token):
    reader = token("reader")

    async def main():
        codes = {}
        async with tasks_client(mcp_url(), reader) as client:
            created = await client.session.call_tool(SLOW, {"seconds": 0, "label": "x"}, allow_claimed=True)
            for name, request in (
                ("tasks/list", types.ListTasksRequest()),
                ("tasks/result", types.GetTaskPayloadRequest(params={"taskId": created.task_id})),
            ):
                with pytest.raises(MCPError) as raised:
                    await client.session.send_request(request, ext._RAW)
                codes[name] = raised.value.error.code
        async with mcp_client(mcp_url(), reader, mode=MODERN) as plain:  # no extension declared
            with pytest.raises(MCPError) as raised:
                await ext.get(plain.session, created.task_id)
            codes["tasks/get without the extension"] = raised.value.error.code
        return codes

    assert run(main) == {
        "tasks/list": types.METHOD_NOT_FOUND,
        "tasks/result": types.METHOD_NOT_FOUND,
        "tasks/get without the extension": types.MISSING_REQUIRED_CLIENT_CAPABILITY,
    }


def test_2025_sessions_keep_core_tasks_with_tasks_list_and_no_tasks_update(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            listed = await list_tasks(client)
            with pytest.raises(MCPError) as raised:
                await ext.update(client.session, "any", {})
            return client.server_capabilities.tasks, listed, raised.value.error.code

    capability, listed, update_code = run(main)
    assert capability.list is not None
    assert listed.tasks == []
    assert update_code == types.METHOD_NOT_FOUND
    assert not ToolTask.all_tenants.exists()
