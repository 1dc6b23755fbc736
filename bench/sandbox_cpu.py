"""CPU per sandbox call, split between the host, the zygote and its single-use children, read from /proc.

The children's share is what the zygote reaps (``cutime + cstime`` of /proc/<zygote>/stat), so it counts
every child that exits during the measured calls: the calls' own children and the spares forked for the
next calls (in steady state one per call). Page faults likewise (``minflt``, ``cminflt``).

``compare`` runs the same measurement on this tree and on another git revision's ``apps_runtime``
(extracted with ``git archive``), rounds alternating, each in a process of its own: a before/after of a
change in one run.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_HZ = os.sysconf("SC_CLK_TCK")


@dataclass
class ProcCpu:
    """One reading of /proc/<pid>/stat: CPU seconds and minor faults, own and of reaped children."""

    own_s: float
    children_s: float
    own_faults: int
    children_faults: int

    @classmethod
    def read(cls, pid: int) -> ProcCpu:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
        # Fields after the parenthesised command (which may hold spaces): field 3 (state) is index 0.
        fields = text[text.rindex(")") + 2 :].split()
        minflt, cminflt = int(fields[7]), int(fields[8])
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        return cls((utime + stime) / _HZ, (cutime + cstime) / _HZ, minflt, cminflt)


class CallMeter:
    """Accumulates per-call CPU of one Sandbox across interleaved rounds."""

    def __init__(self) -> None:
        self.calls = 0
        self.host_s = 0.0
        self.zygote_s = 0.0
        self.children_s = 0.0
        self.zygote_faults = 0
        self.children_faults = 0

    def measure(self, zygote_pid: int, calls: int, run) -> None:
        """Run ``run()`` (which makes ``calls`` calls) and add what it cost."""
        before, host_before = ProcCpu.read(zygote_pid), time.process_time()
        run()
        host_after, after = time.process_time(), ProcCpu.read(zygote_pid)
        self.calls += calls
        self.host_s += host_after - host_before
        self.zygote_s += after.own_s - before.own_s
        self.children_s += after.children_s - before.children_s
        self.zygote_faults += after.own_faults - before.own_faults
        self.children_faults += after.children_faults - before.children_faults

    def per_call(self) -> dict[str, float]:
        n = max(self.calls, 1)
        return {
            "host_ms": self.host_s / n * 1000,
            "zygote_ms": self.zygote_s / n * 1000,
            "children_ms": self.children_s / n * 1000,
            "zygote_faults": self.zygote_faults / n,
            "children_faults": self.children_faults / n,
        }


HEADER = (
    f"{'CPU per call':<34} {'host ms':>8} {'zygote ms':>9} {'children':>9} {'zyg+ch':>7} "
    f"{'zyg flt':>8} {'ch flt':>7}"
)


def row(label: str, cpu: dict[str, float]) -> str:
    both = cpu["zygote_ms"] + cpu["children_ms"]
    return (
        f"{label:<34} {cpu['host_ms']:8.2f} {cpu['zygote_ms']:9.2f} {cpu['children_ms']:9.2f} {both:7.2f} "
        f"{cpu['zygote_faults']:8.0f} {cpu['children_faults']:7.0f}"
    )


# -- before/after: this tree against a git revision --------------------------------------------------------


def _extract(ref: str, into: str) -> None:
    archive = subprocess.run(
        ["git", "-C", ROOT, "archive", ref, "apps_runtime"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)


def _worker(source: str, tiers: list[int], n: int) -> dict:
    """In a process of its own: ``n`` calls per tier with ``source``'s apps_runtime; CPU and latency."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), source, str(n), *(str(t) for t in tiers)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare(ref: str, n: int, rounds: int, tiers: list[int]) -> None:
    """Print CPU per call and p50 per tier for this tree and for ``ref``, rounds alternating."""
    with tempfile.TemporaryDirectory(prefix="bench-ref-") as ref_root:
        _extract(ref, ref_root)
        trees = {"this tree": ROOT, ref: ref_root}
        results: dict[str, list[dict]] = {name: [] for name in trees}
        for round_no in range(rounds):
            order = list(trees.items()) if round_no % 2 == 0 else list(trees.items())[::-1]
            for name, source in order:
                results[name].append(_worker(source, tiers, n))
    print(f"\nCPU per call, this tree vs {ref}: {rounds} alternating rounds of {n} calls per tier")
    print(f"{HEADER} {'p50 ms':>7}")
    for tier in tiers:
        merged = {name: _merge([r[str(tier)] for r in runs]) for name, runs in results.items()}
        for name in trees:
            print(f"{row(f'tier {tier}, {name}', merged[name])} {merged[name]['p50_ms']:7.3f}")
        now, then = merged["this tree"], merged[ref]
        ratios = ", ".join(
            f"{label} x{_ratio(now, then, *keys):.2f}"
            for label, keys in (
                ("zygote+children", ("zygote_ms", "children_ms")),
                ("zygote", ("zygote_ms",)),
                ("children", ("children_ms",)),
                ("host", ("host_ms",)),
                ("p50", ("p50_ms",)),
            )
        )
        print(f"    ratio (this tree / {ref}): {ratios}")


def _merge(runs: list[dict]) -> dict[str, float]:
    keys = runs[0].keys()
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def _ratio(now: dict, then: dict, *keys: str) -> float:
    before = sum(then[k] for k in keys)
    return sum(now[k] for k in keys) / before if before else float("nan")


def worker_main(source: str, n: int, tiers: list[int]) -> None:
    """``sandbox_cpu.py SOURCE N TIER...``: prints one JSON line, per tier."""
    sys.path.insert(0, source)
    # Imported from ``source`` first: bench_sandbox's own imports then find these modules loaded.
    Sandbox = importlib.import_module("apps_runtime.sandbox").Sandbox
    from bench_sandbox import ROUND, WARMUP, make_bundle, percentile

    with tempfile.TemporaryDirectory(prefix="bench-bundles-") as bundles:
        invocation = make_bundle(bundles)
        boxes = {t: Sandbox(bundle_root=bundles, tier=t, min_tier=4, prefork=8) for t in tiers}
        meters = {t: CallMeter() for t in tiers}
        latencies: dict[int, list[float]] = {t: [] for t in tiers}
        try:
            for box in boxes.values():
                box.start()
                for _ in range(WARMUP):
                    box.run(invocation, lambda op, args: None)
            while meters[tiers[0]].calls < n:
                for tier, box in boxes.items():

                    def burst(box=box, samples=latencies[tier]) -> None:
                        for _ in range(ROUND):
                            started = time.perf_counter()
                            box.run(invocation, lambda op, args: None)
                            samples.append((time.perf_counter() - started) * 1000)

                    meters[tier].measure(box.zygote_pid, ROUND, burst)
        finally:
            for box in boxes.values():
                box.close()
    print(
        json.dumps({str(t): {**meters[t].per_call(), "p50_ms": percentile(latencies[t], 50)} for t in tiers})
    )


if __name__ == "__main__":
    worker_main(sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3:]])
