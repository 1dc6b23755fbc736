"""App jobs on one Celery worker over Redis: enqueue-to-start latency and runs per second.

Baseline in the same run, on the same worker and broker: the round trip of a no-op task
(``apps_runtime.ping``, which answers with the worker's clock), one at a time for latency and a burst
for throughput. A job run adds to that a database row written on enqueue, an atomic claim, the
route's sandboxed handler (a fresh forked child) and the recorded outcome.

    .venv/bin/python bench/bench_jobs.py [--runs 200] [--burst 500] [--concurrency 1]

Needs Redis ($REDIS_URL, default redis://127.0.0.1:6379/15); the database is a scratch SQLite file
(or $BENCH_DATABASE_URL) shared with the worker subprocess.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
QUEUE = f"bench-jobs-{uuid.uuid4().hex[:10]}"
# Read by the settings when Django starts below, here and in the worker (which inherits them).
os.environ["CELERY_BROKER_URL"] = REDIS_URL
os.environ["CELERY_RESULT_BACKEND"] = REDIS_URL
os.environ["CELERY_QUEUE"] = QUEUE

from _setup import ROOT, percentile, setup_django  # noqa: E402

setup_django()

import redis  # noqa: E402
from django.db import connection  # noqa: E402

from apps_runtime.deploy import deploy_bundle  # noqa: E402
from apps_runtime.dispatch import load_app  # noqa: E402
from apps_runtime.jobs.enqueue import enqueue_run  # noqa: E402
from apps_runtime.jobs.queue import send_on_commit  # noqa: E402
from apps_runtime.manifest import bundle_from_mapping  # noqa: E402
from apps_runtime.models import JobRun  # noqa: E402
from apps_runtime.records import RecordsScope  # noqa: E402
from apps_runtime.tasks import ping  # noqa: E402
from tenants import actions  # noqa: E402
from tenants.callers import caller_for  # noqa: E402
from tenants.scoping import access_user  # noqa: E402

MANIFEST = {
    "name": "bench",
    "routes": {"POST /jobs/noop": {"handler": "server/noop.py", "auth": "internal"}},
}
FILES = {"server/noop.py": "def handle(request):\n    return {}\n"}


def start_worker(concurrency: int, log: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "lowcode_platform",
        "worker",
        "-l",
        "warning",
        "-P",
        "prefork",
        "-c",
        str(concurrency),
        "-Q",
        QUEUE,
        "-n",
        f"{QUEUE}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with log.open("wb") as out:
        return subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop_worker(worker: subprocess.Popen) -> None:
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def wait_finished(run_ids: list[str], tenant, timeout: float = 120) -> list[JobRun]:
    deadline = time.monotonic() + timeout
    while True:
        runs = list(JobRun.objects.for_tenant(tenant).filter(run_id__in=run_ids))
        if len(runs) == len(run_ids) and all(r.is_finished for r in runs):
            return runs
        if time.monotonic() > deadline:
            raise TimeoutError(f"runs did not finish within {timeout}s")
        time.sleep(0.02)  # timestamps come from the rows: polling less only saves CPU for the worker


def ms(seconds: float) -> float:
    return seconds * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs for the latency figures")
    parser.add_argument("--burst", type=int, default=500, help="runs for the throughput figures")
    parser.add_argument("--concurrency", type=int, default=1, help="the worker's pool processes")
    args = parser.parse_args()
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.exceptions.ConnectionError:
        print(f"SKIPPED: no Redis at {REDIS_URL} (set REDIS_URL)")
        return

    tenant = actions.create_tenant("bench", acting_user=None)
    actions.add_member(tenant, "alice", acting_user=None)
    deploy_bundle(tenant, bundle_from_mapping(MANIFEST, FILES), acting_user=None)
    loaded = load_app(tenant, "bench")
    caller = caller_for(tenant, access_user("alice"))
    scope = RecordsScope(tenant_id=tenant.pk, app_id=loaded.app.pk, compiled=loaded.compiled, caller=caller)

    def enqueue() -> str:
        run = enqueue_run(scope, "POST /jobs/noop", {})  # what request.enqueue does, then the send
        send_on_commit([run.run_id])
        return run.run_id

    log = Path(tempfile.mkdtemp(prefix="bench-worker-")) / "worker.log"
    worker = start_worker(args.concurrency, log)
    try:
        ping.delay().get(timeout=60)  # the worker is up
        wait_finished([enqueue() for _ in range(20)], tenant)  # warm the zygote and the connections
        for _ in range(20):
            ping.delay().get(timeout=30)

        baseline_latency = []
        for _ in range(args.runs):
            sent = time.time()
            baseline_latency.append(ms(ping.delay().get(timeout=30) - sent))
        job_latency = []
        for _ in range(args.runs):
            [run] = wait_finished([enqueue()], tenant)
            job_latency.append(ms((run.started_at - run.enqueued_at).total_seconds()))

        started = time.perf_counter()
        results = [ping.delay() for _ in range(args.burst)]
        for result in results:
            result.get(timeout=120)
        baseline_rate = args.burst / (time.perf_counter() - started)
        run_ids = [enqueue() for _ in range(args.burst)]
        runs = wait_finished(run_ids, tenant)
        first = min(r.enqueued_at for r in runs)
        last = max(r.finished_at for r in runs)
        job_rate = args.burst / (last - first).total_seconds()
        failed = sum(r.status != "succeeded" for r in runs)
    except TimeoutError as err:
        raise SystemExit(f"{err}; the worker's log ends with:\n{log.read_text()[-3000:]}") from err
    finally:
        stop_worker(worker)
        redis.Redis.from_url(REDIS_URL).delete(QUEUE)

    p50_b, p99_b = percentile(baseline_latency, 50), percentile(baseline_latency, 99)
    p50_j, p99_j = percentile(job_latency, 50), percentile(job_latency, 99)
    print(
        f"one worker (prefork, concurrency {args.concurrency}) on Redis, {connection.vendor} database, "
        f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}"
    )
    print(f"enqueue-to-start latency, {args.runs} runs one at a time")
    print(f"  no-op task round trip (baseline)  p50 {p50_b:7.2f} ms   p99 {p99_b:7.2f} ms   1.00x")
    print(
        f"  job run: enqueue to start         p50 {p50_j:7.2f} ms   p99 {p99_j:7.2f} ms   "
        f"{p50_j / p50_b:.2f}x p50, {p99_j / p99_b:.2f}x p99"
    )
    print(f"throughput, a burst of {args.burst}")
    print(f"  no-op tasks (baseline)            {baseline_rate:8.1f} /s   1.00x")
    print(
        f"  job runs, enqueue to finished     {job_rate:8.1f} /s   {job_rate / baseline_rate:.2f}x"
        + (f"   ({failed} failed)" if failed else "")
    )


if __name__ == "__main__":
    main()
