"""Latency of Sandbox.run for a trivial handler, next to calling the same handler in-process.

Run: .venv/bin/python bench/bench_sandbox.py [N]
"""

import importlib.util
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apps_runtime.sandbox import Invocation, Sandbox, SandboxLimits  # noqa: E402
from apps_runtime.sandbox.runtime.sdk import Request  # noqa: E402

HANDLER_SOURCE = """\
def handle(request):
    return {"ok": True, "echo": request.body}
"""
REQUEST = {
    "method": "POST",
    "path": "/bench",
    "body": {"n": 1},
    "query": {},
    "params": {},
    "tool": None,
    "user": {"username": "bench", "roles": [], "superuser": False},
}
WARMUP = 30


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure(fn, n: int) -> list[float]:
    for _ in range(WARMUP):
        fn()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main(n: int = 300) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as bundle_dir:
        os.makedirs(os.path.join(bundle_dir, "server"))
        path = os.path.join(bundle_dir, "server", "bench.py")
        with open(path, "w") as f:
            f.write(HANDLER_SOURCE)

        spec = importlib.util.spec_from_file_location("bench_handler", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        in_process = measure(lambda: module.handle(Request(REQUEST, lambda op, args: None)), n)

        sandbox = Sandbox()
        invocation = Invocation(bundle_dir, "server/bench.py", REQUEST, SandboxLimits())
        try:
            sandboxed = measure(lambda: sandbox.run(invocation, lambda op, args: None), n)
        finally:
            sandbox.close()

    rows = [("in-process", in_process), ("Sandbox.run", sandboxed)]
    print(f"N={n} trivial calls (after {WARMUP} warm-up calls), {os.cpu_count()} CPUs")
    print(f"{'':<12} {'p50 ms':>9} {'p99 ms':>9} {'mean ms':>9}")
    for name, samples in rows:
        print(
            f"{name:<12} {percentile(samples, 50):>9.3f} {percentile(samples, 99):>9.3f} "
            f"{statistics.fmean(samples):>9.3f}"
        )
    overhead = percentile(sandboxed, 50) - percentile(in_process, 50)
    ratio = percentile(sandboxed, 50) / percentile(in_process, 50)
    print(f"overhead p50: {overhead:.3f} ms (target <= 3 ms); ratio p50: {ratio:.0f}x")
    print(f"overhead p99: {percentile(sandboxed, 99) - percentile(in_process, 99):.3f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
