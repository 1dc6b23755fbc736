"""Handler progress and log lines reach an MCP caller that wants them, bounded; nobody else gets them."""

from __future__ import annotations

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import MCPError
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_gateway.conftest import mcp_client
from tests.support.apps import _tool

WORK = """
import time

def handle(request):
    request.log("info", "starting")
    request.log("debug", "details")
    for done in range(1, 4):
        request.progress(done, 3, f"step {done}")
        time.sleep(0.15)
    return {"done": 3}
"""
FLOOD = """
def handle(request):
    for n in range(1, 200001):
        request.progress(n, 200000, "x" * 5000)
    for n in range(1000):
        request.log("error", "y" * 5000)
    return {"done": True}
"""
BURST = """
def handle(request):
    for done in (0, 50, 100):
        request.progress(done, 100, f"step {done}")
    return {"done": 100}
"""
ROUTES = {"work": WORK, "flood": FLOOD, "burst": BURST}
MANIFEST = {
    "name": "worker",
    "routes": {f"POST /{name}": {"handler": f"server/{name}.py", "auth": "user"} for name in ROUTES},
    "mcp": {"tools": [_tool(name, f"POST /{name}") for name in ROUTES]},
}
WORK_TOOL, FLOOD_TOOL, BURST_TOOL = "acme_worker_work", "acme_worker_flood", "acme_worker_burst"
MODES = ["legacy", "2026-07-28"]


@pytest.fixture
def token(mcp_url, acme, deploy, make_token):
    deploy(acme, MANIFEST, {f"server/{name}.py": source for name, source in ROUTES.items()})
    return make_token(acme, "member")[1]


def _call(url, token, mode, tool, *, progress: bool, log_level: str | None = None):
    """Call ``tool``; returns (result, progress seen, log lines seen)."""
    seen, lines = [], []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams):
        lines.append((params.level, params.data))

    modern_level = log_level if mode != "legacy" else None  # a 2026-07-28 request opts in itself

    async def main():
        async with mcp_client(
            url, token, mode=mode, logging_callback=on_log, log_level=modern_level
        ) as client:
            if log_level is not None and mode == "legacy":
                await client.set_logging_level(log_level)
            return await client.call_tool(tool, {}, progress_callback=on_progress if progress else None)

    return anyio.run(main), seen, lines


@pytest.mark.parametrize("mode", MODES)
def test_progress_reaches_the_caller_in_order(mcp_url, token, mode):
    result, seen, _ = _call(mcp_url(), token, mode, WORK_TOOL, progress=True)

    assert result.structured_content == {"done": 3}
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", MODES)
def test_a_short_calls_few_quick_updates_all_arrive(mcp_url, token, mode):
    # Within the pacer's burst nothing is coalesced, however fast the handler reports.
    result, seen, _ = _call(mcp_url(), token, mode, BURST_TOOL, progress=True)

    assert result.structured_content == {"done": 100}
    assert seen == [(0, 100, "step 0"), (50, 100, "step 50"), (100, 100, "step 100")]


@pytest.mark.parametrize("mode", MODES)
def test_no_progress_without_a_token(mcp_url, token, mode):
    result, seen, lines = _call(mcp_url(), token, mode, WORK_TOOL, progress=False)

    assert result.structured_content == {"done": 3}
    assert seen == [] and lines == []


@pytest.mark.parametrize("mode", MODES)
def test_log_lines_reach_a_caller_that_asked_for_them_at_its_level(mcp_url, token, mode):
    result, _, lines = _call(mcp_url(), token, mode, WORK_TOOL, progress=False, log_level="info")

    assert result.structured_content == {"done": 3}
    assert lines == [("info", "starting")]  # debug is below the level asked for


def test_a_progress_call_gets_every_level_until_a_handshake_session_sets_one(mcp_url, token):
    _, seen, lines = _call(mcp_url(), token, "legacy", WORK_TOOL, progress=True)

    assert lines == [("info", "starting"), ("debug", "details")] and len(seen) == 3


@pytest.mark.parametrize("mode", MODES)
def test_a_flood_from_a_hostile_handler_is_bounded(mcp_url, token, mode):
    result, seen, lines = _call(mcp_url(), token, mode, FLOOD_TOOL, progress=True, log_level="debug")

    assert result.structured_content == {"done": True}
    assert 0 < len(seen) < 200 and seen[-1][0] == 200000  # coalesced; the last value arrives
    assert [done for done, _, _ in seen] == sorted({done for done, _, _ in seen})
    assert all(len(message) == 1000 for _, _, message in seen)
    assert len(lines) == 100 and all(len(text) == 1000 for _, text in lines)


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_that_asked_for_progress_is_refused_as_usual(mcp_url, token, mode):
    async def on_progress(done, total, message):
        raise AssertionError("no progress expected")

    async def main():
        async with mcp_client(mcp_url(), token, mode=mode) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("acme_worker_nope", {}, progress_callback=on_progress)
            return refused.value

    assert anyio.run(main).error.code == types.INVALID_PARAMS


def test_the_logging_capability_is_declared_to_handshake_era_clients(mcp_url, token):
    async def main():
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            async with streamable_http_client(mcp_url(), http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    return await session.initialize()

    assert anyio.run(main).capabilities.logging is not None


def test_the_front_end_path_runs_the_same_handler_without_any_of_it(live_url, token):
    response = httpx2.post(
        f"{live_url}/t/acme/apps/worker/work",
        json={},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )

    assert response.status_code == 200 and response.json() == {"done": 3}
