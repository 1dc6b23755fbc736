"""Host-side cost of an outbound request made for a handler (docs/egress.md), against the same request
made directly with the HTTP client, in one run, on loopback.

(a) direct: an ``httpx2.Client`` per request (the platform uses a transport per request).
(b) direct, pooled: one ``httpx2.Client`` kept open (keep-alive): the floor.
(c) platform: ``apps_runtime.egress.client.send`` as the broker calls it: egress rule, DNS and address
    check, pinned connection, capped read, scrub, the audit row and the counters.
(d) the whole handler path: a route whose handler makes the request (sandbox round trip included),
    against a route whose handler returns at once.

    .venv/bin/python bench/bench_egress.py [--calls 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import setup_django, summary  # noqa: E402


def timed(work, calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    setup_django()
    import httpx2
    from django.conf import settings

    from apps_runtime.deploy import deploy_bundle
    from apps_runtime.dispatch import RouteCall, load_app, run_route
    from apps_runtime.egress.client import EgressCall, send
    from apps_runtime.egress.rules import parse_rules
    from apps_runtime.manifest import bundle_from_mapping
    from tenants import actions
    from tenants.callers import Caller
    from tests.support.fake_services import start_fake_service

    settings.EGRESS_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.EGRESS_MAX_REQUESTS_PER_TENANT_MINUTE = 10**9
    api = start_fake_service()
    url = f"{api.base}/status"
    tenant = actions.create_tenant("bench", acting_user=None)
    actions.add_member(tenant, "m", acting_user=None)

    def egress_call() -> EgressCall:
        return EgressCall(
            tenant_id=tenant.pk,
            tenant_slug=tenant.slug,
            app_id=None,
            route_key="GET /x",
            caller=Caller(tenant_id=tenant.pk, user_id=None, username="m"),
            deadline=time.monotonic() + 30,
            rules=parse_rules([api.base]),
            declared_secrets=frozenset(),
            connections={},
        )

    from apps_runtime.egress.transport import tls_context

    pooled = httpx2.Client(trust_env=False)

    def direct() -> dict:
        # A client per request, with the same shared TLS context and no environment: what send() does.
        with httpx2.Client(verify=tls_context(), trust_env=False) as client:
            return client.get(url).json()

    cases = {
        "direct, client per req": direct,
        "direct pooled client": lambda: pooled.get(url).json(),
        "platform send()": lambda: send(egress_call(), {"method": "GET", "url": url}),
    }
    for work in cases.values():
        timed(work, 20)  # warm
    results = {name: [] for name in cases}
    for _ in range(3):  # interleaved rounds, so drift hits every case alike
        for name, work in cases.items():
            results[name] += timed(work, args.calls // 3)
    manifest = {
        "name": "bench",
        "egress": [api.base],
        "routes": {
            "GET /out": {"handler": "out.py", "auth": "user"},
            "GET /none": {"handler": "none.py", "auth": "user"},
        },
    }
    files = {
        "out.py": f"def handle(request):\n    return request.http.get({url!r})['json']\n",
        "none.py": "def handle(request):\n    return {}\n",
    }
    deploy_bundle(tenant, bundle_from_mapping(manifest, files), acting_user=None)
    loaded = load_app(tenant, "bench")
    caller = Caller(tenant_id=tenant.pk, user_id=1, username="m", is_member=True)
    routes = {path: loaded.compiled.routes.match("GET", path)[0] for path in ("/out", "/none")}
    for path, route in routes.items():
        call = RouteCall(loaded, route, caller)
        assert not run_route(call).failed, run_route(call)
        results[f"handler {path}"] = timed(lambda call=call: run_route(call), args.calls)
    for name, samples in results.items():
        print(f"{name:24} {summary(samples)}")
    base = statistics.median(results["direct, client per req"])
    platform = statistics.median(results["platform send()"])
    floor = statistics.median(results["direct pooled client"])
    handler = statistics.median(results["handler /out"]) - statistics.median(results["handler /none"])
    print(f"platform send() / direct, client per request: {platform / base:.2f}x (p50)")
    print(f"platform send() / direct pooled client: {platform / floor:.2f}x (p50)")
    print(
        f"a request inside a handler adds {handler:.2f} ms to the route (p50 /out - p50 /none), "
        f"{handler / base:.2f}x the direct request"
    )
    api.close()


if __name__ == "__main__":
    main()
