"""Latency of Sandbox.run for a trivial handler at each isolation tier, in one run, next to the unprotected
fork (tier "unconfined": the same zygote and protocol, no limits, no uid drop, no Landlock/seccomp/namespaces)
and to calling the handler in-process.

Run: .venv/bin/python bench/bench_sandbox.py [N]
Tiers that do not work on this host are reported and skipped. Rounds alternate between the tiers so that
drift (CPU frequency, other load) hits them all alike.
"""

import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from apps_runtime.sandbox import (  # noqa: E402
    TIER_NAMES,
    Invocation,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
)
from apps_runtime.sandbox.runtime.sdk import Request  # noqa: E402

HANDLER_SOURCE = """\
def handle(request):
    return {"ok": True, "echo": request.body}
"""
REQUEST = {"method": "POST", "path": "/bench", "body": {"n": 1}, "query": {}, "params": {}, "tool": None,
           "user": {"username": "bench", "roles": [], "superuser": False}}
WARMUP = 30
ROUND = 20  # calls per tier per round
BASELINE = 4  # "unconfined"
TARGET_MS = 1.0  # the strongest tier may cost at most this much more than the unprotected fork


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main(n: int = 300) -> None:
    bundles = tempfile.mkdtemp(prefix="bench-bundles-")
    try:
        run(bundles, n)
    finally:
        shutil.rmtree(bundles, ignore_errors=True)


def run(bundles: str, n: int) -> None:
    os.chmod(bundles, 0o711)
    bundle_dir = os.path.join(bundles, "app")
    os.makedirs(os.path.join(bundle_dir, "server"))
    os.chmod(bundle_dir, 0o755)
    path = os.path.join(bundle_dir, "server", "bench.py")
    with open(path, "w") as f:
        f.write(HANDLER_SOURCE)
    os.chmod(path, 0o644)

    spec = importlib.util.spec_from_file_location("bench_handler", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    in_process = [timed(lambda: module.handle(Request(REQUEST, lambda op, args: None))) for _ in range(n)]

    invocation = Invocation(bundle_dir, "server/bench.py", REQUEST, SandboxLimits())
    boxes: dict[int, Sandbox] = {}
    for level in (1, 2, 3, BASELINE):
        box = Sandbox(bundle_root=bundles, tier=level, min_tier=BASELINE)
        try:
            box.start()
        except SandboxUnavailable as exc:
            print(f"tier {level} ({TIER_NAMES[level]}) unavailable here: {exc}")
            box.close()
            continue
        boxes[level] = box
    samples: dict[int, list[float]] = {level: [] for level in boxes}

    def call(box: Sandbox) -> None:
        box.run(invocation, lambda op, args: None)

    try:
        for box in boxes.values():
            for _ in range(WARMUP):
                call(box)
        while min(len(s) for s in samples.values()) < n:
            for level, box in boxes.items():
                for _ in range(min(ROUND, n - len(samples[level]))):
                    started = time.perf_counter()
                    call(box)
                    samples[level].append((time.perf_counter() - started) * 1000)
    finally:
        for box in boxes.values():
            box.close()

    print(f"N={n} trivial calls per tier (after {WARMUP} warm-up calls each), {os.cpu_count()} CPUs, "
          f"running as uid {os.geteuid()}")
    base = percentile(samples[BASELINE], 50) if BASELINE in samples else None
    print(f"{'':<28} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'vs fork p50':>12} {'ratio':>6}")
    rows = [("in-process", in_process)] + [
        (f"tier {level} {TIER_NAMES[level]}", samples[level]) for level in sorted(samples, reverse=True)
    ]
    for name, data in rows:
        p50 = percentile(data, 50)
        extra = f"{p50 - base:+12.3f} {p50 / base:6.2f}" if base else ""
        print(f"{name:<28} {p50:8.3f} {percentile(data, 99):8.3f} {statistics.fmean(data):8.3f} {extra}")
    if base is not None and samples:
        strongest = min(samples)
        overhead = percentile(samples[strongest], 50) - base
        verdict = "OK" if overhead <= TARGET_MS else "OVER TARGET"
        print(f"strongest tier here: {strongest} ({TIER_NAMES[strongest]}); p50 overhead over the "
              f"unprotected fork {overhead:.3f} ms (target <= {TARGET_MS} ms): {verdict}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
