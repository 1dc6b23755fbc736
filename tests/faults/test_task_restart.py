"""MCP tasks across a server restart: they live in the database.

A task still queued when the server is SIGKILLed (the first server has a broker but no worker) is
sent again by the restarted server when it is polled, and the client reads the result it was
promised. A task whose run was under way is not run twice: once past its time limit it ends failed.
"""

from __future__ import annotations

import os
import uuid

import anyio
import mcp.types as types
import pytest

from mcp_gateway.mcp_tasks.store import LOST_MESSAGE
from tests.mcp_gateway.conftest import mcp_client
from tests.support.platform_process import PlatformProcess, migrated_database
from tests.support.task_client import create_task, get_task, send, wait_until_finished

pytestmark = pytest.mark.slow
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
SLOW = "acme_reports_slow_report"
SEED = """
import json
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from tenants.models import Tenant
from tests.support.platform_seed import seed
from tests.support.task_app import TASK_FILES, task_manifest
tokens = seed()["tokens"]
bundle = bundle_from_mapping(task_manifest(), TASK_FILES)
deploy_bundle(Tenant.objects.get(slug="acme"), bundle, acting_user=None)
print(json.dumps(tokens))
"""


@pytest.fixture
def platform(tmp_path):
    queue = f"mcp-tasks-restart-{uuid.uuid4().hex[:12]}"  # nobody consumes it
    database = migrated_database(tmp_path)
    platform = PlatformProcess(
        tmp_path, database.url, env={"CELERY_BROKER_URL": REDIS_URL, "CELERY_QUEUE": queue}
    )
    try:
        yield platform
    finally:
        platform.stop()
        database.drop()
        _forget(queue)


def _forget(queue: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.delete(queue)
    client.close()


def test_a_task_queued_when_the_server_dies_finishes_after_the_restart(platform):
    tokens = platform.python(SEED)
    platform.start()
    url = f"{platform.base_url}/t/acme/mcp"

    async def create():
        async with mcp_client(url, tokens["reader"]) as client:
            created = await create_task(client, SLOW, {"seconds": 0, "label": "survivor"})
            return created.task.task_id, await get_task(client, created.task.task_id)

    task_id, before = anyio.run(create)
    assert before.status == "working"

    platform.kill()
    platform._extra_env = {"TASK_RESEND_SECONDS": "0"}  # no broker now: runs go to the server's threads
    platform.start()

    async def finish():
        async with mcp_client(url, tokens["reader"]) as client:
            final = await wait_until_finished(client, task_id)
            return final, await send(client, types.GetTaskPayloadRequest(params={"taskId": task_id}))

    final, result = anyio.run(finish)
    assert final.status == "completed"
    assert types.CallToolResult.model_validate(result).structured_content == {"label": "survivor", "slept": 0}


def test_a_task_running_when_the_server_dies_ends_failed_and_is_not_run_again(tmp_path):
    database = migrated_database(tmp_path)
    platform = PlatformProcess(tmp_path, database.url, env={"TASK_RUN_GRACE_SECONDS": "0"})
    try:
        tokens = platform.python(SEED)
        platform.start()
        url = f"{platform.base_url}/t/acme/mcp"

        async def start_running():
            async with mcp_client(url, tokens["reader"]) as client:
                created = await create_task(client, "acme_reports_staged", {"seconds": 10})
                with anyio.fail_after(30):  # its handler has reported progress: it is running
                    while (await get_task(client, created.task.task_id)).status_message is None:
                        await anyio.sleep(0.1)
                return created.task.task_id

        task_id = anyio.run(start_running)
        platform.kill()
        platform.start()

        async def outcome():
            async with mcp_client(url, tokens["reader"]) as client:
                final = await wait_until_finished(client, task_id)
                return final, await send(client, types.GetTaskPayloadRequest(params={"taskId": task_id}))

        final, result = anyio.run(outcome)
    finally:
        platform.stop()
        database.drop()
    assert final.status == "failed" and final.status_message == LOST_MESSAGE
    assert types.CallToolResult.model_validate(result).is_error is True
