"""MCP tasks end to end: the official SDK client against a live server, runs in-process (no broker)."""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import MCPError

from mcp_gateway.models import ToolCallAudit, ToolTask
from tests.mcp_gateway.conftest import mcp_client
from tests.support.task_app import TASK_FILES, task_manifest
from tests.support.task_client import create_task, get_task, list_tasks, send, wait_until_finished

Outcome = ToolCallAudit.Outcome
SLOW = "acme_reports_slow_report"
QUICK = "acme_reports_quick"
PLAIN = "acme_reports_plain"


@pytest.fixture
def app(mcp_url, acme, deploy):
    deploy(acme, task_manifest(), TASK_FILES)
    return acme


@pytest.fixture
def token(app, make_token):
    return lambda username, **kw: make_token(app, username, **kw)[1]


def run(fn):
    return anyio.run(fn)


def test_task_tools_list_their_task_support_and_the_server_its_task_capability(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            return client.server_capabilities.tasks, tools

    capability, tools = run(main)
    assert capability.list is not None and capability.cancel is not None
    assert capability.requests.tools.call is not None
    assert tools[SLOW].execution.task_support == "required"
    assert tools[QUICK].execution.task_support == "optional"
    assert tools[PLAIN].execution is None


def test_a_task_is_created_at_once_polled_and_its_result_read(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, SLOW, {"seconds": 0.2, "label": "q3"}, ttl=120_000)
            final = await wait_until_finished(client, created.task.task_id)
            result = await send(client, types.GetTaskPayloadRequest(params={"taskId": created.task.task_id}))
            return created, final, result

    created, final, raw = run(main)
    result = types.CallToolResult.model_validate(raw)
    assert created.task.status == "working"
    assert created.task.ttl == 120_000 and created.task.poll_interval > 0
    assert final.status == "completed"
    assert result.is_error is False
    assert result.structured_content == {"label": "q3", "slept": 0.2}
    assert result.meta["io.modelcontextprotocol/related-task"] == {"taskId": created.task.task_id}
    assert "resultType" not in raw  # a 2025-11-25 result
    outcomes = list(ToolCallAudit.all_tenants.filter(wire_name=SLOW).values_list("outcome", flat=True))
    assert sorted(outcomes) == sorted([Outcome.TASK_CREATED, Outcome.OK])


def test_a_tool_error_ends_the_task_failed_with_the_error_as_its_result(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, SLOW, {"seconds": 0, "label": "fail"})
            final = await wait_until_finished(client, created.task.task_id)
            result = await send(client, types.GetTaskPayloadRequest(params={"taskId": created.task.task_id}))
            return final, types.CallToolResult.model_validate(result)

    final, result = run(main)
    assert final.status == "failed"
    assert result.is_error is True
    assert result.content[0].text == "asked to fail"


def test_a_required_task_tool_called_without_a_task_is_method_not_found(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool(SLOW, {"seconds": 0, "label": "x"})
            return raised.value.error

    error = run(main)
    assert error.code == types.METHOD_NOT_FOUND
    assert "must be called as a task" in error.message


def test_an_optional_task_tool_without_a_task_answers_synchronously(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            return await client.call_tool(QUICK, {})

    result = run(main)
    assert result.is_error is False
    assert result.structured_content == {"quick": True}
    assert not ToolTask.all_tenants.exists()


def test_a_tool_without_task_support_refuses_a_task(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            with pytest.raises(MCPError) as raised:
                await create_task(client, PLAIN, {})
            return raised.value.error

    assert run(main).code == types.METHOD_NOT_FOUND
    assert not ToolTask.all_tenants.exists()


def test_bad_arguments_are_a_tool_error_and_create_no_task(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name=SLOW, arguments={"seconds": "soon"}, task=types.TaskMetadata()
                )
            )
            return types.CallToolResult.model_validate(await send(client, request))

    result = run(main)
    assert result.is_error is True and "Invalid arguments" in result.content[0].text
    assert not ToolTask.all_tenants.exists()


def test_a_running_task_is_cancelled_and_keeps_no_result(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, SLOW, {"seconds": 2, "label": "long"})
            task_id = created.task.task_id
            cancelled = await send(client, types.CancelTaskRequest(params={"taskId": task_id}))
            with pytest.raises(MCPError) as again:
                await send(client, types.CancelTaskRequest(params={"taskId": task_id}))
            result = await send(client, types.GetTaskPayloadRequest(params={"taskId": task_id}))
            return task_id, types.CancelTaskResult.model_validate(cancelled), again.value.error, result

    task_id, cancelled, again, result = run(main)
    assert cancelled.status == "cancelled"
    assert again.code == types.INVALID_PARAMS and "already cancelled" in again.message
    assert types.CallToolResult.model_validate(result).is_error is True
    assert ToolTask.all_tenants.get(task_id=task_id).status == "cancelled"


def test_callers_list_and_read_only_their_own_tasks(mcp_url, token):
    reader, writer = token("reader"), token("writer")

    async def create(raw):
        async with mcp_client(mcp_url(), raw) as client:
            return (await create_task(client, SLOW, {"seconds": 0, "label": "mine"})).task.task_id

    async def main():
        mine = await create(reader)
        theirs = await create(writer)
        async with mcp_client(mcp_url(), reader) as client:
            listed = [task.task_id for task in (await list_tasks(client)).tasks]
            errors = []
            for request in (
                types.GetTaskRequest(params={"taskId": theirs}),
                types.GetTaskPayloadRequest(params={"taskId": theirs}),
                types.CancelTaskRequest(params={"taskId": theirs}),
            ):
                with pytest.raises(MCPError) as raised:
                    await send(client, request)
                errors.append(raised.value.error)
            own = await get_task(client, mine)
        return mine, listed, errors, own

    mine, listed, errors, own = run(main)
    assert listed == [mine]
    assert [(e.code, e.message.split(":")[0]) for e in errors] == [
        (types.INVALID_PARAMS, "Task not found")
    ] * 3
    assert own.task_id == mine


def test_too_many_unfinished_tasks_of_a_caller_are_refused_with_a_clear_error(mcp_url, token, settings):
    reader = token("reader")
    settings.TASK_MAX_ACTIVE_PER_CALLER = 1

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            first = await create_task(client, SLOW, {"seconds": 2, "label": "a"})
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name=SLOW, arguments={"seconds": 0, "label": "b"}, task=types.TaskMetadata()
                )
            )
            refused = types.CallToolResult.model_validate(await send(client, request))
            await send(client, types.CancelTaskRequest(params={"taskId": first.task.task_id}))
            return refused

    refused = run(main)
    assert refused.is_error is True
    assert refused.content[0].text.startswith("Too many unfinished tasks (1 per credential)")
    assert ToolCallAudit.all_tenants.filter(wire_name=SLOW, outcome=Outcome.RATE_LIMITED).count() == 1


def test_2026_clients_without_the_tasks_extension_get_optional_ones_synchronously_required_ones_32021(
    mcp_url, token
):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader, mode="auto") as client:
            quick = await client.call_tool(QUICK, {})
            with pytest.raises(MCPError) as raised:
                await client.call_tool(SLOW, {"seconds": 0, "label": "x"})
            return client.protocol_version, quick, raised.value.error

    version, quick, error = run(main)
    assert version == "2026-07-28"
    assert quick.structured_content == {"quick": True}
    # The tasks extension (SEP-2663): a required task tool needs the extension declared.
    assert error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data["requiredCapabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}


def test_tasks_result_waits_a_bounded_time_then_says_to_poll_again(mcp_url, token, settings):
    settings.TASK_RESULT_WAIT_SECONDS = 0
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, SLOW, {"seconds": 2, "label": "later"})
            with pytest.raises(MCPError) as raised:
                await send(client, types.GetTaskPayloadRequest(params={"taskId": created.task.task_id}))
            await send(client, types.CancelTaskRequest(params={"taskId": created.task.task_id}))
            return raised.value.error

    error = run(main)
    assert error.code == types.INVALID_REQUEST
    assert "still working" in error.message and "tasks/get" in error.message


def test_handler_progress_shows_as_the_tasks_status_message_while_it_works(mcp_url, token):
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, "acme_reports_staged", {"seconds": 3})
            with anyio.fail_after(30):
                while (task := await get_task(client, created.task.task_id)).status_message is None:
                    assert task.status == "working"
                    await anyio.sleep(0.1)
            return task, await wait_until_finished(client, created.task.task_id)

    working, final = run(main)
    assert working.status == "working" and working.status_message == "1/2: halfway"
    assert final.status == "completed"


@pytest.mark.parametrize("public_base_url", ["", "https://platform.example"])
def test_a_tasks_resource_link_has_the_origin_of_the_call_that_created_it(
    mcp_url, live_url, token, settings, public_base_url
):
    settings.DEBUG = True  # the request's own origin is the public one only in DEBUG (core.origin)
    # The run has no request of its own: without PUBLIC_BASE_URL (the demo) the link needs the
    # origin the task was created through; with it, PUBLIC_BASE_URL wins as for any call.
    settings.PUBLIC_BASE_URL = public_base_url
    reader = token("reader")

    async def main():
        async with mcp_client(mcp_url(), reader) as client:
            created = await create_task(client, "acme_reports_linked", {})
            final = await wait_until_finished(client, created.task.task_id)
            result = await send(client, types.GetTaskPayloadRequest(params={"taskId": created.task.task_id}))
            return final, types.CallToolResult.model_validate(result)

    final, result = run(main)
    assert final.status == "completed", result.content
    [link] = result.content
    assert isinstance(link, types.ResourceLink)
    assert (link.uri, link.name) == (f"{public_base_url or live_url}/t/acme/apps/reports/quick", "Quick")
