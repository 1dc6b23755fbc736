"""Tool search: how well and how fast ``search_tools`` finds the right tool, beside two baselines.

A tenant gets the catalog of ``search_catalog.py`` deployed as real bundles (25 apps, 315 tools, 10
apps behind roles) and nine members with different roles. Each labelled intent is asked through the
MCP endpoint (uvicorn on a loopback port, the official SDK client, both protocol eras) as its user,
with ``limit`` 20. In the same run, over exactly the tools that user's ``tools/list`` shows:

- plain BM25: ``bm25s`` over each tool's name, title, description and argument names and
  descriptions, English stop words and the same Snowball stemmer;
- FastMCP's ``BM25SearchTransform`` (its own index and tokenizer), run by ``fastmcp_search.py`` in a
  separate venv this benchmark creates (FastMCP pins ``mcp`` on its own schedule, so it never enters
  the project's environment): ``$BENCH_FASTMCP_VENV``, default ``var/bench-fastmcp-venv``, made
  with ``python -m venv`` and ``pip install fastmcp==4.1.6`` on first use (PyPI needed once).

Printed: recall@1, recall@5 and MRR over the intents whose tool the user may use; leaks (any
returned tool not in the user's tools/list, in either era; for an intent whose tool needs a role the
user lacks, that tool coming back); how often ``canSatisfyIntent`` is right; ablations (no manifest
keywords, no vectors) measured in-process; the token cost of ``search`` against ``list`` mode per
user; and at a 5,000-tool tenant (16 copies of the catalog) the p50 of ``search_tools`` in-process
and through the endpoint, against a plain bm25s query over the same tools, plus the first search
after a deploy (the index rebuilt).

    .venv/bin/python bench/bench_search.py [--no-fastmcp] [--copies 16]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from _setup import fastmcp_python, setup_django

setup_django()

import bm25s  # noqa: E402
import httpx2  # noqa: E402
import Stemmer  # noqa: E402
import uvicorn  # noqa: E402
from django.conf import settings  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from search_catalog import APPS, HANDLER, INTENTS, USERS, manifest  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.manifest import bundle_from_mapping  # noqa: E402
from apps_runtime.wire_names import wire_name  # noqa: E402
from mcp_gateway.tools.call.preview import tools_list  # noqa: E402
from mcp_gateway.tools.catalog import token_estimate  # noqa: E402
from mcp_gateway.tools.catalog.catalog import catalog_for, visible_tools  # noqa: E402
from mcp_gateway.tools.search import search_index as search_index_module  # noqa: E402
from mcp_gateway.tools.search.search_index import SearchIndex, words  # noqa: E402
from mcp_gateway.tools.search.tool_search import search_tools  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.callers import caller_for  # noqa: E402
from tenants.models import Tenant  # noqa: E402

K = 20
ERAS = ("legacy", "2026-07-28")


# -- the platform ------------------------------------------------------------------------------------


def make_tenant(slug: str, copies: int) -> tuple[Tenant, dict[str, str]]:
    """A tenant with ``copies`` of the catalog deployed and the benchmark's users; their tokens."""
    tenant = actions.create_tenant(slug, acting_user=None)
    for user, roles in USERS.items():
        actions.add_member(tenant, user, roles=roles, acting_user=None)
    for copy in range(copies):
        for app in APPS:
            suffix = f"_c{copy}" if copy else ""
            deploy_bundle(
                tenant, bundle_from_mapping(manifest(app, suffix=suffix), HANDLER), acting_user=None
            )
    tokens = {user: actions.issue_token(tenant, user, acting_user=None)[1] for user in USERS}
    return Tenant.objects.get(pk=tenant.pk), tokens


def gold_wire(tenant: Tenant, gold: str) -> str:
    app, tool = gold.split(".")
    return wire_name(tenant.mcp_prefix, app, tool, limit=settings.MCP_WIRE_NAME_LIMIT)


@contextmanager
def served(app):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def session_run(url: str, token: str, mode: str, work: Callable):
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            return await work(client)


async def listing(client) -> list[dict]:
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
        if (cursor := page.next_cursor) is None:
            return tools


def endpoint_rankings(url: str, tenant: Tenant, tokens: dict[str, str]) -> tuple[dict, dict, list, int]:
    """Per user: tools/list entries; per intent: ranked names and canSatisfyIntent; leaks seen."""
    listed, ranked, leaks, calls = {}, {}, [], 0
    search = f"{tenant.mcp_prefix}_search_tools"
    for user in USERS:
        mine = [i for i in INTENTS if i.user == user]
        for mode in ERAS:

            async def work(client, mine=mine):
                tools = await listing(client)
                results = []
                for intent in mine:
                    result = await client.call_tool(search, {"query": intent.text, "limit": K})
                    results.append(result.structured_content)
                return tools, results

            tools, results = asyncio.run(session_run(url, tokens[user], mode, work))
            names = {t["name"] for t in tools}
            listed.setdefault(user, tools)
            for intent, result in zip(mine, results, strict=True):
                calls += 1
                found = [t["name"] for t in result["tools"]]
                leaks += [(mode, user, intent.text, n) for n in found if n not in names]
                ranked.setdefault(intent, (found, result["canSatisfyIntent"]))
    return listed, ranked, leaks, calls


# -- baselines ---------------------------------------------------------------------------------------


def plain_text(tool: dict) -> str:
    properties = (tool.get("inputSchema") or {}).get("properties") or {}
    arguments = " ".join(f"{words(k)} {v.get('description', '')}" for k, v in properties.items())
    return " ".join([words(tool["name"]), tool.get("title") or "", tool.get("description") or "", arguments])


class PlainBM25:
    """bm25s over name, title, description and argument text (English stop words and stemmer)."""

    def __init__(self, tools: list[dict]):
        self.names = [t["name"] for t in tools]
        self.stemmer = Stemmer.Stemmer("english")
        corpus = bm25s.tokenize([plain_text(t) for t in tools], stemmer=self.stemmer, show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(corpus, show_progress=False)

    def rank(self, query: str, k: int = K) -> list[str]:
        tokens = bm25s.tokenize([query], stemmer=self.stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self.retriever.retrieve(tokens, k=min(k, len(self.names)), show_progress=False)
        return [self.names[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def fastmcp_rankings(listed: dict[str, list[dict]], search: str) -> dict | None:
    python = fastmcp_python()
    job = {
        "k": K,
        "tools": {u: [t for t in tools if t["name"] != search] for u, tools in listed.items()},
        "queries": [[i.user, i.text] for i in INTENTS],
    }
    out = subprocess.run(
        [str(python), str(Path(__file__).parent / "fastmcp_search.py")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(zip(INTENTS, json.loads(out.stdout)["rankings"], strict=True))


# -- figures -----------------------------------------------------------------------------------------


def quality(rankings: dict, answerable: list) -> tuple[float, float, float]:
    ranks = []
    for intent, gold in answerable:
        found = rankings[intent]
        ranks.append(found.index(gold) + 1 if gold in found else None)
    n = len(ranks)
    return (
        sum(r == 1 for r in ranks) / n,
        sum(r is not None and r <= 5 for r in ranks) / n,
        sum(1 / r for r in ranks if r is not None) / n,
    )


def in_process_rankings(tenant: Tenant, index: SearchIndex) -> dict:
    out = {}
    for intent in INTENTS:
        caller = caller_for(tenant, tenant.memberships.get(user__username=intent.user).user)
        candidates = [e for e in visible_tools(tenant, caller) if e.builtin != "search_tools"]
        out[intent] = [e.wire_name for e in index.rank(intent.text, candidates, K).entries]
    return out


def p50_ms(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def token_costs(tenant: Tenant) -> list[tuple[str, int, int, int]]:
    rows = []
    for user in USERS:
        caller = caller_for(tenant, tenant.memberships.get(user__username=user).user)
        tenant.settings = {**tenant.settings, "toolDiscovery": "list"}
        listed = tools_list(tenant, caller).estimated_tokens
        tenant.settings = {**tenant.settings, "toolDiscovery": "search"}
        searched = tools_list(tenant, caller).estimated_tokens
        mine = [i for i in INTENTS if i.user == user]
        results = [search_tools(tenant, caller, {"query": i.text, "limit": 5}) for i in mine]
        per_search = round(statistics.mean(token_estimate.estimate_tokens(r) for r in results))
        rows.append((user, listed, searched, per_search))
    tenant.settings = {k: v for k, v in tenant.settings.items() if k != "toolDiscovery"}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-fastmcp", action="store_true")
    parser.add_argument("--copies", type=int, default=16, help="catalog copies of the big tenant")
    args = parser.parse_args()
    settings.JOBS_IN_PROCESS_CLOCK = False
    print(f"load average at start: {os.getloadavg()[0]:.2f}")

    tenant, tokens = make_tenant("bench", 1)
    catalog = catalog_for(tenant)
    app_tools = [e for e in catalog.entries if e.builtin is None]
    print(
        f"catalog: {len({e.app_name for e in app_tools})} apps, {len(app_tools)} tools; "
        f"{len(INTENTS)} intents; {len(USERS)} users"
    )

    from lowcode_platform.asgi import application

    with served(application) as base:
        url = f"{base}/t/{tenant.slug}/mcp"
        listed, ranked, leaks, calls = endpoint_rankings(url, tenant, tokens)
        big, big_tokens = make_tenant("big", args.copies)
        big_calls = [i for i in INTENTS if i.user == "finance"] * 3
        search = f"{big.mcp_prefix}_search_tools"
        small_search = f"{tenant.mcp_prefix}_search_tools"

        def endpoint_p50(url: str, token: str, name: str) -> tuple[float, float]:
            async def work(client):
                await client.call_tool(name, {"query": "warm up", "limit": 5})
                started = time.perf_counter()
                await client.call_tool(name, {"query": "first", "limit": 5})
                first = (time.perf_counter() - started) * 1000
                samples = []
                for intent in big_calls:
                    started = time.perf_counter()
                    await client.call_tool(name, {"query": intent.text, "limit": 5})
                    samples.append((time.perf_counter() - started) * 1000)
                return statistics.median(samples), first

            return asyncio.run(session_run(url, token, "legacy", work))

        big_catalog = catalog_for(big)
        cold_started = time.perf_counter()
        big_catalog.search_index  # noqa: B018 - the first search of a state builds it
        cold_ms = (time.perf_counter() - cold_started) * 1000
        small_e2e, _ = endpoint_p50(url, tokens["finance"], small_search)
        big_e2e, _ = endpoint_p50(f"{base}/t/big/mcp", big_tokens["finance"], search)
        small_e2e_again, _ = endpoint_p50(url, tokens["finance"], small_search)

    answerable = []
    for intent in INTENTS:
        gold = gold_wire(tenant, intent.gold)
        if gold in {t["name"] for t in listed[intent.user]}:
            answerable.append((intent, gold))
    restricted = [i for i in INTENTS if (i, gold_wire(tenant, i.gold)) not in answerable]
    mislabelled = [i.text for i in INTENTS if (i.kind == "restricted") != (i in restricted)]

    ours = {i: found for i, (found, _) in ranked.items()}
    plain = {}
    for user, tools in listed.items():
        index = PlainBM25([t for t in tools if t["name"] != small_search])
        plain.update({i: index.rank(i.text) for i in INTENTS if i.user == user})
    fast = None if args.no_fastmcp else fastmcp_rankings(listed, small_search)

    gold_leaks = [i.text for i in restricted if gold_wire(tenant, i.gold) in ours[i]]
    print(f"\nsearch_tools through the MCP endpoint: {calls} calls in {len(ERAS)} eras")
    print(
        f"leaks: {len(leaks) + len(gold_leaks)} (tools outside the caller's tools/list: {len(leaks)}; "
        f"a role-restricted gold tool returned: {len(gold_leaks)})"
    )
    if mislabelled:
        print(f"  labels disagree with the catalog's roles: {mislabelled}")
    print(f"\n{len(answerable)} answerable intents, {len(restricted)} whose tool needs a role the user lacks")
    print(f"{'system':46} recall@1  recall@5    MRR")
    rows = [("search_tools (MCP endpoint)", ours), ("plain BM25 (bm25s, stemmed)", plain)]
    if fast is not None:
        rows.append(("FastMCP BM25SearchTransform", fast))
    no_keywords = SearchIndex([dataclasses.replace(e, keywords=()) for e in catalog.search_index.entries])
    rows.append(("  ablation: no manifest keywords (in-process)", in_process_rankings(tenant, no_keywords)))
    weight = search_index_module.LEXICAL_WEIGHT
    search_index_module.LEXICAL_WEIGHT = 1.0
    rows.append(("  ablation: lexical only, no vectors", in_process_rankings(tenant, catalog.search_index)))
    search_index_module.LEXICAL_WEIGHT = weight
    figures = {}
    for label, rankings in rows:
        figures[label] = quality(rankings, answerable)
        r1, r5, mrr = figures[label]
        print(f"{label:46} {r1:8.3f} {r5:9.3f} {mrr:7.3f}")
    best_baseline = max(v[1] for k, v in figures.items() if not k.startswith(("search_tools", "  ")))
    print(
        f"recall@5 of search_tools minus the best baseline's: {figures[rows[0][0]][1] - best_baseline:+.3f}"
    )
    for kind in ("paraphrase", "synonym", "typo"):
        subset = [(i, g) for i, g in answerable if i.kind == kind]
        if subset:
            r1, r5, mrr = quality(ours, subset)
            print(
                f"  search_tools on {kind:10} ({len(subset):3} intents): "
                f"r@1 {r1:.3f}  r@5 {r5:.3f}  MRR {mrr:.3f}"
            )
    said_yes = sum(ranked[i][1] for i, _ in answerable)
    said_no = sum(not ranked[i][1] for i in restricted)
    print(
        f"canSatisfyIntent: true for {said_yes}/{len(answerable)} answerable, "
        f"false for {said_no}/{len(restricted)} role-restricted"
    )

    print("\ntoken cost per user (estimate: UTF-8 bytes of compact JSON / 4)")
    print(f"{'user':10} {'list mode':>10} {'search mode':>12} {'+ one search':>13} {'ratio':>7}")
    for user, listed_tokens, searched, per_search in token_costs(tenant):
        total = searched + per_search
        print(f"{user:10} {listed_tokens:10,} {searched:12,} {total:13,} {total / listed_tokens:7.2f}")

    big = Tenant.objects.get(slug="big")
    caller = caller_for(big, big.memberships.get(user__username="finance").user)
    visible = [e for e in visible_tools(big, caller) if e.builtin != "search_tools"]
    plain_big = PlainBM25([e.tool.model_dump(by_alias=True, mode="json", exclude_none=True) for e in visible])
    texts = [i.text for i in big_calls]
    cycle = iter(texts * 10)
    ours_ms = p50_ms(lambda: search_tools(big, caller, {"query": next(cycle), "limit": 5}), len(texts))
    cycle = iter(texts * 10)
    plain_ms = p50_ms(lambda: plain_big.rank(next(cycle), 5), len(texts))
    total = sum(1 for e in catalog_for(big).entries if e.builtin is None)
    print(f"\n{total:,}-tool tenant, finance member ({len(visible):,} tools visible), limit 5:")
    print(
        f"  search_tools in-process p50 {ours_ms:6.2f} ms; plain bm25s query over the same tools "
        f"p50 {plain_ms:6.2f} ms (x{ours_ms / plain_ms:.1f})"
    )
    small_caller = caller_for(tenant, tenant.memberships.get(user__username="finance").user)
    cycle = iter(texts * 10)
    small_ms = p50_ms(
        lambda: search_tools(tenant, small_caller, {"query": next(cycle), "limit": 5}), len(texts)
    )
    print(f"  at the {len(app_tools)}-tool tenant: in-process p50 {small_ms:6.2f} ms")
    print(
        f"  through the MCP endpoint p50 {big_e2e:6.2f} ms; at the {len(app_tools)}-tool tenant "
        f"{small_e2e:6.2f} ms before and {small_e2e_again:6.2f} ms after (x{big_e2e / small_e2e_again:.2f})"
    )
    print(f"  first search of a new state (index built, every vector embedded): {cold_ms:7.1f} ms")
    first_app = APPS[0]
    deploy_bundle(big, bundle_from_mapping(manifest(first_app, keywords=False), HANDLER), acting_user=None)
    big = Tenant.objects.get(slug="big")
    started = time.perf_counter()
    catalog_for(big)
    catalog_ms = (time.perf_counter() - started) * 1000
    print(f"  catalog rebuilt after redeploying one app (tools/list pays this too): {catalog_ms:7.1f} ms")
    started = time.perf_counter()
    search_tools(big, caller, {"query": "bill a customer", "limit": 5})
    print(
        f"  then its first search (index rebuilt, the other tools' vectors "
        f"cached): {(time.perf_counter() - started) * 1000:7.1f} ms"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
