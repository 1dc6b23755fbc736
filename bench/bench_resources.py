"""What resources and prompts cost next to tools, in one run: catalogs per tenant change, lists per caller.

    .venv/bin/python bench/bench_resources.py [--apps 50]

A tenant of ``--apps`` copies of the test app with resources and prompts (tests.support.resource_app:
10 tools, 6 resources, 4 prompts each). Measured in process, no server: building the tenant's tool
catalog (the baseline: what every deploy or role change already costs) against building its resource
and prompt catalogs; then one caller's tools/list page against its resources/list,
resources/templates/list and prompts/list pages, each a page the gateway serves from a built
catalog. Ratios are against the tool figure of the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from _setup import setup_django


def timed(work: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    setup_django()

    from apps_runtime.deploy import deploy_bundle
    from apps_runtime.manifest import bundle_from_mapping
    from mcp_gateway.tools.call import calls
    from mcp_gateway.tools.catalog.catalog import build_catalog
    from mcp_gateway.tools.prompts import prompts
    from mcp_gateway.tools.resources import resources
    from tenants import actions
    from tests.support.resource_app import FILES, resource_manifest

    tenant = actions.create_tenant("bench-resources", acting_user=None)
    actions.add_member(tenant, "reader", roles=["case_reader"], acting_user=None)
    for index in range(args.apps):
        manifest = resource_manifest()
        manifest["name"] = f"cases{index}"
        deploy_bundle(tenant, bundle_from_mapping(manifest, FILES), acting_user=None)
    tenant.refresh_from_db()
    from tenants.callers import caller_for
    from tenants.models import Membership

    member = Membership.objects.for_tenant(tenant).select_related("user").get(user__username="reader")
    caller = caller_for(tenant, member.user)

    builds = {
        "tool catalog (baseline)": lambda: build_catalog(tenant),
        "resource catalog": lambda: resources.build_resources(tenant),
        "prompt catalog (with its resources)": lambda: prompts.build_prompts(tenant),
    }
    base = None
    print(f"{args.apps} apps: per tenant change, median of {args.rounds}")
    for label, work in builds.items():
        ms = timed(work, args.rounds)
        base = base or ms
        print(f"  {label:38s} {ms:8.2f} ms   x{ms / base:.2f}")
    lists = {
        "tools/list page (baseline)": lambda: calls.list_tools(tenant, caller, None),
        "resources/list page": lambda: resources.list_resources(tenant, caller, None),
        "resources/templates/list page": lambda: resources.list_templates(tenant, caller, None),
        "prompts/list page": lambda: prompts.list_prompts(tenant, caller, None),
    }
    for work in lists.values():
        work()  # the catalogs are built once, as the first request after a change builds them
    base = None
    print(f"per request, catalogs built, median of {args.rounds * 10}")
    for label, work in lists.items():
        ms = timed(work, args.rounds * 10)
        base = base or ms
        print(f"  {label:38s} {ms:8.3f} ms   x{ms / base:.2f}")


if __name__ == "__main__":
    main()
