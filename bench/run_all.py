"""Run every benchmark, one after the other; each prints its figures next to its own baseline."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SUITES = [
    "bench_sandbox.py",
    "bench_runtime.py",
    "bench_deploy.py",
    "bench_gateway.py",
    "bench_fairness.py",
    "bench_jobs.py",
    "bench_search.py",
]
# Ten minutes of load: only with `run_all.py --soak`, so a plain run stays quick.
SOAK = "bench_soak.py"

if __name__ == "__main__":
    failed = []
    for name in SUITES + ([SOAK] if "--soak" in sys.argv[1:] else []):
        if not (HERE / name).exists():
            continue
        print(f"\n== {name}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)], check=False).returncode != 0:
            failed.append(name)
    sys.exit(f"failed: {', '.join(failed)}" if failed else 0)
