"""Run the official MCP conformance suite against a live platform, one scenario at a time.

    .venv/bin/python -m tests.conformance.suite [--requirements 2026-07-28 ...] [--scenario S ...]

A platform process of its own (``manage.py serve`` on a scratch SQLite database) serves the fixture
tenant of ``seed.py`` behind the auth-adding ``proxy.py``; each required scenario of each revision
runs in its own ``conformance server --scenario S --spec-version REV --force`` process under a
timeout, as ``--requirements REV`` would run it. The suite is pinned (``SUITE``) and installed with
Node 22 from npm into a cache folder, as ``.ci/inspector-check`` does.

The tasks extension's scenarios (``EXTENSION``, SEP-2663: not in the required sets, which do not
score extensions) run as a set of their own against 2026-07-28, checked the same way.

Exit status 0 when every scenario passes except those in ``NOT_SERVED`` (each with its reason, and
each still expected to fail: one that starts passing fails the run, so the list cannot go stale).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from tests.conformance.proxy import AuthProxy
from tests.support.platform_process import Database, PlatformProcess, free_port

SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
REVISIONS = ("2026-07-28", "2025-11-25")
NODE_DIR = Path(os.environ.get("NODE22_DIR", Path.home() / ".cache" / "lcp-node22"))
SUITE_DIR = Path(os.environ.get("CONFORMANCE_DIR", Path.home() / ".cache" / "lcp-conformance"))
SCENARIO_SECONDS = 90
# The tasks extension (io.modelcontextprotocol/tasks) scenarios, run against this revision.
EXTENSION = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
EXTENSION_REVISION = "2026-07-28"
# The served platform's task settings: the fixture's protocol_error_job returns 100 kB, over what a
# task keeps here (its failure is the platform's, as the scenario wants); four task threads, all
# open to the one tenant, so a run the suite cancels (its route stops at 5 s) holds none back.
PLATFORM_ENV = {"TASK_MAX_RESULT_BYTES": "65536", "TASK_IN_PROCESS_WORKERS": "4", "TASK_TENANT_SHARE": "4"}

# Required scenarios the platform does not pass, by (revision, scenario), with the reason. Each is
# still run; ``--check`` fails when one of them passes (then it comes off this list).
NOT_SERVED: dict[tuple[str, str], str] = {
    ("2026-07-28", "tasks-mrtr-composition"): (
        "A task tool's handler runs only in its task, so its questions reach the client as the task's "
        "input_required rounds (tasks/get, answered with tasks/update), never as an InputRequiredResult "
        "before the task exists; the scenario wants test_tool_with_task's user_name asked first and the "
        "task created on the retried call. Only a manifest confirm question comes before the task."
    ),
}


@dataclass
class Outcome:
    revision: str
    scenario: str
    passed: bool
    summary: str
    extension: bool = False


def suite_bin() -> Path:
    """The pinned suite's CLI, installed (with Node 22) into the cache folders when missing."""
    node = NODE_DIR / "node_modules" / ".bin" / "node"
    if not node.exists():
        subprocess.run(["npm", "install", "--silent", "--prefix", str(NODE_DIR), "node@22"], check=True)
    cli = SUITE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance"
    installed = json.loads((cli / "package.json").read_text())["version"] if cli.exists() else None
    if installed != SUITE.rsplit("@", 1)[1]:
        subprocess.run(["npm", "install", "--silent", "--prefix", str(SUITE_DIR), SUITE], check=True)
    return cli


def required(cli: Path, revision: str) -> list[str]:
    """The server scenarios the suite's frozen requirement set of ``revision`` lists."""
    scenarios, inside = [], False
    for line in (cli / "requirements" / f"{revision}.yaml").read_text().splitlines():
        if not line.startswith(" "):
            inside = line.strip() == "server:"
        elif inside and line.strip().startswith("- "):
            scenarios.append(line.strip()[2:].strip())
    return scenarios


def run_scenario(cli: Path, url: str, revision: str, scenario: str, out: Path) -> Outcome:
    node = NODE_DIR / "node_modules" / ".bin" / "node"
    command = [
        str(node),
        str(cli / "dist" / "index.js"),
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "--spec-version",
        revision,
        "--force",
        "-o",
        str(out),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SCENARIO_SECONDS)
    except subprocess.TimeoutExpired:
        return Outcome(revision, scenario, False, f"timed out after {SCENARIO_SECONDS}s")
    failed = [c for c in _checks(out) if c.get("status") == "FAILURE"]
    summary = "; ".join(f"{c.get('id')}: {c.get('errorMessage', '')}"[:300] for c in failed[:4])
    if done.returncode != 0 and not summary:
        summary = (done.stderr or done.stdout)[-300:]
    return Outcome(revision, scenario, done.returncode == 0, summary)


def _checks(out: Path) -> list[dict]:
    checks = []
    for path in out.rglob("checks.json"):
        checks += json.loads(path.read_text())
    return checks


class ProxyThread(threading.Thread):
    def __init__(self, app: AuthProxy, port: int):
        super().__init__(daemon=True)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    def run(self) -> None:
        asyncio.run(self.server.serve())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requirements", action="append", choices=REVISIONS)
    parser.add_argument("--scenario", action="append", help="only these scenarios (required or not)")
    parser.add_argument("--check", action="store_true", help="fail on a scenario outside NOT_SERVED")
    parser.add_argument("--no-extension", action="store_true", help="only the required sets")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    args = parser.parse_args(argv)
    cli = suite_bin()
    work = Path(tempfile.mkdtemp(prefix="conformance-"))
    platform = PlatformProcess(work, Database.sqlite(work / "platform.sqlite3").url, env=PLATFORM_ENV)
    try:
        platform.migrate()
        fixture = platform.python(
            "import json; from tests.conformance.seed import seed; print(json.dumps(seed()))"
        )
        platform.start()
        port = free_port()
        proxy = ProxyThread(AuthProxy(platform.base_url, fixture["token"]), port)
        proxy.start()
        while not proxy.server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/t/conformance/mcp"
        outcomes = []
        for revision, scenario in planned(cli, args):
            outcome = run_scenario(cli, url, revision, scenario, work / "results" / revision / scenario)
            outcome.extension = scenario in EXTENSION
            outcomes.append(outcome)
            mark = "PASS" if outcome.passed else "FAIL"
            print(f"{revision} {mark} {scenario} {outcome.summary}", flush=True)
        proxy.server.should_exit = True
    finally:
        platform.stop()
        if os.environ.get("CONFORMANCE_KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return report(outcomes, args)


def planned(cli: Path, args: argparse.Namespace) -> list[tuple[str, str]]:
    """(revision, scenario) to run: ``--scenario`` ones, or each revision's required set and, with
    2026-07-28, the tasks extension's set."""
    runs = []
    for revision in args.requirements or REVISIONS:
        scenarios = args.scenario or required(cli, revision)
        if not args.scenario and revision == EXTENSION_REVISION and not args.no_extension:
            scenarios = [*scenarios, *EXTENSION]
        runs += [(revision, scenario) for scenario in scenarios]
    return runs


def report(outcomes: list[Outcome], args: argparse.Namespace) -> int:
    status = 0
    for revision in sorted({o.revision for o in outcomes}, reverse=True):
        for extension, label in ((False, revision), (True, f"{revision} tasks extension")):
            mine = [o for o in outcomes if o.revision == revision and o.extension == extension]
            if mine:
                print(f"{label}: {sum(o.passed for o in mine)} of {len(mine)} scenarios passed")
    for o in outcomes:
        reason = NOT_SERVED.get((o.revision, o.scenario))
        if not o.passed and reason is None:
            print(f"unexpected failure: {o.revision} {o.scenario}: {o.summary}")
            status = 1
        elif o.passed and reason is not None:
            print(f"now passes, take it off NOT_SERVED: {o.revision} {o.scenario}")
            status = 1
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return status if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
