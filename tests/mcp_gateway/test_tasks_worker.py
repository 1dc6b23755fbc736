"""MCP tasks run by a real Celery worker over Redis (the production shape), not in the server."""

from __future__ import annotations

import uuid

import anyio
import mcp.types as types
import pytest

from mcp_gateway.models import ToolCallAudit, ToolTask
from tests.apps_runtime.conftest import Worker, forget_queue, restore_broker, use_broker
from tests.mcp_gateway.conftest import mcp_client
from tests.support.task_app import TASK_FILES, task_manifest
from tests.support.task_client import create_task, send, wait_until_finished

pytestmark = pytest.mark.slow
SLOW = "acme_reports_slow_report"


@pytest.fixture
def worker(tmp_path):
    queue = f"mcp-tasks-test-{uuid.uuid4().hex[:12]}"
    worker = Worker(queue, tmp_path)
    old = use_broker(eager=False, queue=queue)
    worker.start()
    yield worker
    worker.stop()
    restore_broker(old)
    forget_queue(queue)


def test_a_task_runs_on_the_worker_and_the_server_answers_its_result(
    mcp_url, acme, deploy, make_token, worker
):
    deploy(acme, task_manifest(), TASK_FILES)
    raw = make_token(acme, "reader")[1]

    async def main():
        async with mcp_client(mcp_url(), raw) as client:
            created = await create_task(client, SLOW, {"seconds": 0.1, "label": "on the worker"})
            final = await wait_until_finished(client, created.task.task_id, limit_seconds=120)
            result = await send(client, types.GetTaskPayloadRequest(params={"taskId": created.task.task_id}))
            return created.task.task_id, final, types.CallToolResult.model_validate(result)

    task_id, final, result = anyio.run(main)
    assert final.status == "completed", worker.log_tail()
    assert result.structured_content == {"label": "on the worker", "slept": 0.1}
    assert "mcp_gateway.run_tool_task" in worker.log_tail()
    assert ToolTask.all_tenants.get(task_id=task_id).started_at is not None
    outcomes = sorted(ToolCallAudit.all_tenants.filter(wire_name=SLOW).values_list("outcome", flat=True))
    assert outcomes == sorted([ToolCallAudit.Outcome.TASK_CREATED, ToolCallAudit.Outcome.OK])
