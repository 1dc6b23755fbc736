"""A trivial app route through HTTP next to the same handler function called in-process.

Also measures a plain Django view (/healthz) through the same server, so the difference between
the route and it is the cost the sandbox and route dispatch add (aim: at most 3 ms at p50).

    .venv/bin/python bench/bench_runtime.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from _setup import setup_django, summary

setup_django()

import httpx2  # noqa: E402
from bench_gateway import seed, serve_platform  # noqa: E402

CALLS = 300


def handle(request):  # the same function the route's handler file defines
    return {"pong": True}


def timed_ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    token, _ = seed()
    server = serve_platform("runtime", Path(tempfile.mkdtemp(prefix="bench-runtime-")))
    try:
        base = server.base
        with httpx2.Client(headers={"Authorization": f"Bearer {token}"}) as http:
            route = f"{base}/t/bench/apps/ping_app/ping"
            for _ in range(30):
                http.get(route)
                http.get(f"{base}/healthz")
            in_process = [timed_ms(lambda: handle(None)) for _ in range(CALLS)]
            plain, routed = [], []
            for _ in range(CALLS):
                plain.append(timed_ms(lambda: http.get(f"{base}/healthz")))
                routed.append(timed_ms(lambda: http.get(route)))
    finally:
        server.stop()
    overhead = statistics.median(routed) - statistics.median(plain)
    print(f"trivial route, {CALLS} calls each")
    print(f"  handler called in-process (baseline)  {summary(in_process)}")
    print(f"  plain Django view over HTTP           {summary(plain)}")
    print(f"  app route over HTTP (sandboxed)       {summary(routed)}")
    print(
        f"  route vs plain view: {statistics.median(routed) / statistics.median(plain):.2f}x;"
        f" sandbox + dispatch overhead at p50: {overhead:.2f} ms (aim <= 3 ms)"
    )


if __name__ == "__main__":
    main()
