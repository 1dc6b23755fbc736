"""Code mode against plain tool calls, on a multi-step task over the demo tenant.

The task: "the open cases of every client named like <X>, each with its full record" (find_case,
then get_case for each open match). The demo tenant (``seed_demo``) gets ``--cases`` more cases
(a third of them open, clients named like "Anderson ..."). Done as a model would, through the
official SDK client connected in process (``mcp_gateway.transport.in_process.connect``) as the
demo's reader:

- plain: tools/list, find_case, then get_case for each open case, one tools/call each;
- code mode: tools/list, then one run_code whose script makes the same calls and returns only the
  open cases' records.

Printed, as ratios code mode / plain measured in the same run: the tokens the model reads (the
tools/list it is given plus each result's text, characters / 4), the round trips (requests the
model makes), and the wall time (median) and CPU time (mean: /proc counts 10 ms ticks) of the
calls, CPU of this process and every process under it (the sandbox's zygote, workers and call
children), over ``--rounds``, plain and code mode alternating.

    .venv/bin/python bench/bench_code_mode.py [--cases 30] [--rounds 30] [--query anderson]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from io import StringIO
from pathlib import Path

from _setup import setup_django

setup_django()

import anyio  # noqa: E402
from django.core.management import call_command  # noqa: E402

from apps_runtime.dispatch import load_app  # noqa: E402
from apps_runtime.records import RecordsScope, create_record  # noqa: E402
from mcp_gateway.transport.in_process import connect  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.callers import caller_for  # noqa: E402
from tenants.models import Tenant  # noqa: E402
from tenants.scoping import access_user  # noqa: E402

FIND, GET, RUN = "acme_case_portal_find_case", "acme_case_portal_get_case", "acme_run_code"
SCRIPT = """
cases = tools.call("{find}", {{"query": "{query}"}})["result"]
result = [
    {{"id": case["id"], **tools.call("{get}", {{"case_id": case["id"]}})}}
    for case in cases
    if case["status"] == "open"
]
"""
CLK_TCK = os.sysconf("SC_CLK_TCK")


def seed(cases: int) -> tuple[Tenant, str]:
    call_command("seed_demo", stdout=StringIO())
    tenant = Tenant.objects.get(slug="acme")
    loaded = load_app(tenant, "case_portal")
    scope = RecordsScope(tenant.pk, loaded.app.pk, loaded.compiled, caller_for(tenant, access_user("admin")))
    surnames = ["Anderson", "Baker", "Carter"]
    for n in range(cases):
        data = {
            "client_name": f"{surnames[n % 3]} Holdings {n}",
            "reference": f"C-2{n:03d}",
            "status": "open" if n % 9 < 3 else "closed",
            "reason": "Renewal of the support contract, waiting on the client's signed order. " * 2,
        }
        create_record(scope, "cases", data)
    _, raw = actions.issue_token(tenant, "reader", acting_user=None)
    return tenant, raw


def tree_cpu_seconds() -> float:
    """CPU of this process and every live descendant, with what they reaped (utime+stime+cutime+cstime)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = sum(int(f) for f in fields[11:15])
    me, total = os.getpid(), 0
    for pid, tick in ticks.items():
        walk = pid
        while walk not in (0, 1, me) and walk in parents:
            walk = parents[walk]
        if walk == me:
            total += tick
    return total / CLK_TCK


def chars(result) -> int:
    return sum(len(block.text) for block in result.content if getattr(block, "text", None))


async def plain(client, query: str) -> tuple[int, int, list]:
    """(characters read, round trips, the answer) of the task as one tools/call per step."""
    found = await client.call_tool(FIND, {"query": query})
    read, trips, answer = chars(found), 1, []
    for case in found.structured_content["result"]:
        if case["status"] != "open":
            continue
        full = await client.call_tool(GET, {"case_id": case["id"]})
        read, trips = read + chars(full), trips + 1
        answer.append({"id": case["id"], **full.structured_content})
    return read, trips, answer


async def code_mode(client, query: str) -> tuple[int, int, list]:
    script = SCRIPT.format(find=FIND, get=GET, query=query)
    result = await client.call_tool(RUN, {"code": script})
    assert not result.is_error, result.content
    return chars(result) + len(script), 1, result.structured_content["result"]  # it writes the script too


async def measure(raw: str, query: str, rounds: int) -> dict:
    async with connect("acme", raw) as client:
        listing = await client.list_tools()
        listed = len(
            json.dumps([t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listing.tools])
        )
        out: dict = {"listed_chars": listed, "plain": [], "code": []}
        for kind, run in (("plain", plain), ("code", code_mode)):  # warm both paths once
            out[f"{kind}_task"] = await run(client, query)
        assert out["plain_task"][2] == out["code_task"][2], "both ways must give the same answer"
        for _ in range(rounds):
            for kind, run in (("plain", plain), ("code", code_mode)):
                cpu, wall = tree_cpu_seconds(), time.perf_counter()
                await run(client, query)
                out[kind].append((time.perf_counter() - wall, tree_cpu_seconds() - cpu))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--query", default="anderson")
    args = parser.parse_args()
    _, raw = seed(args.cases)
    out = anyio.run(measure, raw, args.query, args.rounds)
    listed = out["listed_chars"]
    p_chars, p_trips, answer = out["plain_task"]
    c_chars, c_trips, _ = out["code_task"]
    p_tokens, c_tokens = (listed + p_chars) / 4, (listed + c_chars) / 4
    p_trips, c_trips = p_trips + 1, c_trips + 1  # tools/list
    print(f"task: open cases of clients like {args.query!r}: {len(answer)} of {args.cases + 3} cases")
    print(
        f"tokens read   plain {p_tokens:8.0f}   code mode {c_tokens:8.0f}   ratio {c_tokens / p_tokens:.2f}"
    )
    print(
        f"  results only plain {p_chars / 4:8.0f}   code mode {c_chars / 4:8.0f}   "
        f"ratio {c_chars / p_chars:.2f} (tools/list {listed / 4:.0f} tokens in both)"
    )
    print(f"round trips   plain {p_trips:8d}   code mode {c_trips:8d}   ratio {c_trips / p_trips:.2f}")
    p = statistics.median(s[0] for s in out["plain"]) * 1000
    c = statistics.median(s[0] for s in out["code"]) * 1000
    print(f"wall median   plain {p:8.1f} ms   code mode {c:8.1f} ms   ratio {c / p:.2f}")
    # CPU in clock ticks (10 ms): the mean over every round, not a median of coarse samples.
    p = sum(s[1] for s in out["plain"]) * 1000 / args.rounds
    c = sum(s[1] for s in out["code"]) * 1000 / args.rounds
    print(f"CPU mean      plain {p:8.1f} ms   code mode {c:8.1f} ms   ratio {c / p:.2f}")
    print(f"({args.rounds} rounds each, alternating; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
