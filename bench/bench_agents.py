"""Tenant agents: what an agent's tool call costs over the same tool call made directly.

Baseline in the same run: ``call_tool`` (the function an MCP tools/call goes through) called N times
for the member. Then one agent run whose scripted model (pydantic-ai's FunctionModel, no network)
calls the same tool N times, one call per step, and answers: its time per tool call includes the
framework's loop, the step rows, the audit lookup and the thread crossings. Both on a built-in tool
(no sandbox) and on an app tool (the demo's find_case, a sandboxed handler).

    .venv/bin/python bench/bench_agents.py [--calls 100]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _setup import ROOT, setup_django

setup_django()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402

from agents import definitions  # noqa: E402
from agents.execution import execute_run  # noqa: E402
from agents.models import AgentRun  # noqa: E402
from agents.runs import start_run  # noqa: E402
from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import read_bundle  # noqa: E402
from mcp_gateway.tools.call.calls import call_tool  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.callers import caller_for  # noqa: E402


def direct(tenant, caller, name: str, arguments: dict, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        result = call_tool(tenant, caller, name, arguments)
        assert not result.is_error, result
    return (time.perf_counter() - started) / calls * 1000


def make_agent(tenant, name: str, calls: int):
    return definitions.create_agent(
        tenant,
        {
            "name": f"bench_{name[-20:]}",
            "provider": "bench",
            "model": "scripted",
            "max_steps": calls + 2,
            "max_tool_calls": calls,
            "max_tokens": 10_000_000,
            "max_seconds": 3600,
        },
        acting_user=None,
    )


def through_agent(tenant, user, agent, name: str, arguments: dict, calls: int) -> float:
    def script(messages, info):
        asked = sum(1 for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolCallPart))
        if asked < calls:
            return ModelResponse(parts=[ToolCallPart(name, arguments)])
        return ModelResponse(parts=[TextPart("done")])

    with transaction.atomic():  # this thread runs it; the slice queued on commit then finds it done
        run = start_run(tenant, agent, user, "go")
        started = time.perf_counter()
        execute_run(run.run_id, model=FunctionModel(script))
        elapsed = (time.perf_counter() - started) / calls * 1000
    run = AgentRun.objects.for_tenant(tenant).get(pk=run.pk)
    assert run.status == "completed" and run.usage["tool_calls"] == calls, (run.status, run.reason)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    from django.conf import settings

    settings.AGENT_PROVIDERS = {"bench": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}}
    tenant = actions.create_tenant("acme", acting_user=None)
    actions.add_member(tenant, "reader", roles=["case_reader"], acting_user=None)
    actions.set_tenant_setting(tenant, "agentRunsPerDay", 1000, acting_user=None)
    deploy_bundle(tenant, read_bundle(ROOT / "fixtures" / "apps" / "case_portal"), acting_user=None)
    definitions.set_provider_key(tenant, "bench", "unused", acting_user=None)
    user = get_user_model().objects.get(username="reader")
    caller = caller_for(tenant, user)
    print(f"{args.calls} tool calls each; ms per tool call (median of 3 rounds); same run, same tenant\n")
    for label, name, arguments in [
        ("built-in collections_list", "acme_collections_list", {}),
        ("app tool find_case (sandboxed)", "acme_case_portal_find_case", {"query": "ada"}),
    ]:
        base = statistics.median(direct(tenant, caller, name, arguments, args.calls) for _ in range(3))
        agent_row = make_agent(tenant, name, args.calls)
        agent = statistics.median(
            through_agent(tenant, user, agent_row, name, arguments, args.calls) for _ in range(3)
        )
        print(
            f"{label:32} direct {base:7.2f}   agent {agent:7.2f}   "
            f"x{agent / base:5.2f}   (+{agent - base:.2f} ms)"
        )


if __name__ == "__main__":
    main()
