"""The host side: concurrency, zygote failures, process-wide instance, and the no-Django rule."""

import ast
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import apps_runtime.sandbox
from apps_runtime.sandbox import (
    HandlerFailed,
    Invocation,
    Sandbox,
    SandboxLimits,
    configure_sandbox,
    get_sandbox,
)

from .bundles import refuse_data_calls, write_bundle
from .conftest import TIERS

REPO_ROOT = Path(__file__).resolve().parents[3]
RUNTIME_DIR = Path(apps_runtime.sandbox.__file__).parent / "runtime"
ECHO = "def handle(request):\n    return {'echo': request.body}\n"


@pytest.fixture(params=TIERS, ids=[f"tier{level}" for level in TIERS])
def own_sandbox(request, tmp_path, bundles_root):
    """A Sandbox of the test's own (at each tier), for tests that break its zygote."""
    box = Sandbox(scratch_root=str(tmp_path / "scratch"), bundle_root=str(bundles_root), tier=request.param)
    assert box.tier_level == request.param
    yield box
    box.close()


def sandbox_processes(zygote_pid: int) -> set[int]:
    """Host pids of every process in the zygote's PID namespace (just the zygote's tree below tier 1)."""
    own_ns = os.readlink(f"/proc/{zygote_pid}/ns/pid")
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == own_ns:
                    found.add(int(entry))
            except OSError:
                pass
    return found if own_ns != os.readlink("/proc/self/ns/pid") else {zygote_pid}


def echo_invocation(bundle_dir, body=None, **limits) -> Invocation:
    write_bundle(bundle_dir, {"server/echo.py": ECHO})
    return Invocation(str(bundle_dir), "server/echo.py", {"body": body or {}}, SandboxLimits(**limits))


def test_concurrent_calls_each_get_their_own_answer(sandbox, bundle_dir):
    write_bundle(
        bundle_dir,
        {
            "server/h.py": """
        def handle(request):
            got = request.records.get("cases", request.body["n"])
            return {"n": request.body["n"], "got": got, "printed": print(request.body["n"])}
    """
        },
    )

    def call(n: int):
        def broker(op, args):
            assert threading.current_thread().name == caller
            return {"for": args["id"]}

        caller = threading.current_thread().name
        outcome = sandbox.run(
            Invocation(str(bundle_dir), "server/h.py", {"body": {"n": n}}, SandboxLimits()), broker
        )
        return outcome.body, outcome.logs

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(call, range(48)))

    assert results == [({"n": n, "got": {"for": n}, "printed": None}, f"{n}\n") for n in range(48)]


def test_a_timeout_does_not_disturb_concurrent_calls(sandbox, bundle_dir, bundles_root):
    spin_dir = bundles_root / f"{bundle_dir.name}-spin"
    write_bundle(spin_dir, {"h.py": "def handle(request):\n    while True:\n        pass\n"})

    invocations = [echo_invocation(bundle_dir, {"i": i}) for i in range(20)]

    with ThreadPoolExecutor(max_workers=3) as pool:
        spin = Invocation(str(spin_dir), "h.py", {}, SandboxLimits(timeout_ms=500))
        spinning = pool.submit(sandbox.run, spin, refuse_data_calls)
        answers = [pool.submit(sandbox.run, invocation, refuse_data_calls) for invocation in invocations]
        assert [a.result().body for a in answers] == [{"echo": {"i": i}} for i in range(20)]
        with pytest.raises(HandlerFailed) as failed:
            spinning.result()

    assert failed.value.kind == "handler_timeout"


def test_zygote_killed_externally_is_replaced_on_the_next_call(own_sandbox, bundle_dir):
    own_sandbox.run(echo_invocation(bundle_dir), refuse_data_calls)
    first_zygote = own_sandbox.zygote_pid

    os.kill(first_zygote, signal.SIGKILL)
    outcome = own_sandbox.run(echo_invocation(bundle_dir, {"after": "kill"}), refuse_data_calls)

    assert outcome.body == {"echo": {"after": "kill"}}
    assert own_sandbox.zygote_pid != first_zygote


def test_zygote_dying_mid_call_fails_that_call_as_unavailable(own_sandbox, bundle_dir):
    write_bundle(
        bundle_dir,
        {
            "h.py": """
        def handle(request):
            request.records.get("cases", "1")  # a data call happened: the call must not be retried
            while True:
                pass
    """
        },
    )

    def broker(op, args):  # the zygote crashes while the handler runs (a handler itself may not kill it)
        os.kill(own_sandbox.zygote_pid, signal.SIGKILL)
        return {}

    with pytest.raises(HandlerFailed) as failed:
        own_sandbox.run(Invocation(str(bundle_dir), "h.py", {}, SandboxLimits()), broker)

    assert failed.value.kind == "sandbox_unavailable"
    assert own_sandbox.run(echo_invocation(bundle_dir), refuse_data_calls).body == {"echo": {}}


def test_unresponsive_zygote_is_killed_at_the_backstop_and_replaced(own_sandbox, bundle_dir):
    own_sandbox.run(echo_invocation(bundle_dir), refuse_data_calls)
    stuck = own_sandbox.zygote_pid
    old_sandbox = sandbox_processes(stuck)  # at tier 1: bubblewrap's init, the zygote
    os.kill(stuck, signal.SIGSTOP)

    started = time.monotonic()
    with pytest.raises(HandlerFailed) as failed:
        own_sandbox.run(echo_invocation(bundle_dir, timeout_ms=200), refuse_data_calls)

    assert failed.value.kind == "handler_timeout"
    assert time.monotonic() - started < 3.0
    assert own_sandbox.run(echo_invocation(bundle_dir), refuse_data_calls).body == {"echo": {}}
    assert own_sandbox.zygote_pid != stuck
    with pytest.raises(ProcessLookupError):
        os.kill(stuck, 0)
    assert not {pid for pid in old_sandbox if os.path.exists(f"/proc/{pid}")}  # the whole sandbox is gone


def test_close_stops_the_zygote_and_removes_the_scratch_root(bundle_dir):
    box = Sandbox()
    box.run(echo_invocation(bundle_dir), refuse_data_calls)
    zygote, scratch_root = box.zygote_pid, box.scratch_dir

    box.close()

    with pytest.raises(ProcessLookupError):
        os.kill(zygote, 0)
    assert not os.path.exists(scratch_root)
    with pytest.raises(RuntimeError):
        box.run(echo_invocation(bundle_dir), refuse_data_calls)


def test_unstartable_zygote_fails_calls_as_unavailable(tmp_path, bundle_dir):
    box = Sandbox(python=str(tmp_path / "no-such-python"))
    try:
        with pytest.raises(HandlerFailed) as failed:
            box.run(echo_invocation(bundle_dir), refuse_data_calls)
    finally:
        box.close()

    assert failed.value.kind == "sandbox_unavailable"


def test_get_sandbox_is_one_instance_per_process():
    first = get_sandbox()
    assert get_sandbox() is first

    pid = os.fork()
    if pid == 0:  # the forked process must not use the parent's zygote
        child_box = get_sandbox()
        fresh = child_box is not first and get_sandbox() is child_box
        child_box.close()
        os._exit(0 if fresh else 1)
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0


def test_configure_sandbox_sets_the_options_of_the_process_wide_instance(bundles_root, bundle_dir):
    before = get_sandbox()
    try:
        configure_sandbox(bundle_root=str(bundles_root), min_tier="namespaces", max_concurrent_per_tenant=2)
        box = get_sandbox()

        assert box is not before and box.bundle_root == str(bundles_root)
        assert box.tier == "namespaces"
        assert box.run(echo_invocation(bundle_dir, {"via": "get_sandbox"}), refuse_data_calls).body == {
            "echo": {"via": "get_sandbox"}
        }
        with pytest.raises(TypeError):
            configure_sandbox(no_such_option=1)
        with pytest.raises(ValueError):
            configure_sandbox(min_tier="paranoid")
        assert get_sandbox() is box  # a refused configuration changes nothing
    finally:
        configure_sandbox()


def test_importing_the_sandbox_imports_nothing_from_django_or_the_platform():
    # Save core.error_ids, core.tenant_gate and core.caches, the platform's error-id rule, per-tenant
    # gate and bounded cache (standard library, python-ulid and cachetools only), and core.storable,
    # its rule for text it keeps or logs (standard library only).
    script = (
        "import sys, apps_runtime.sandbox\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "             {'django', 'rest_framework', 'tenants', 'mcp_gateway', 'lowcode_platform'})\n"
        "ours = sorted(m for m in sys.modules if getattr(sys.modules[m], '__file__', None)\n"
        f"             and sys.modules[m].__file__.startswith({str(REPO_ROOT)!r} + '/')\n"
        "             and not sys.modules[m].__file__.startswith(sys.prefix + '/')\n"
        "             and m not in ('apps_runtime', 'core', 'core.error_ids',\n"
        "                           'core.tenant_gate', 'core.caches', 'core.storable')\n"
        "             and not m.startswith('apps_runtime.sandbox'))\n"
        "print(bad, ours)\n"
        "assert not bad and not ours\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "lowcode_platform.settings"},
    )

    assert result.returncode == 0, result.stdout + result.stderr


def test_child_side_runtime_uses_only_the_standard_library():
    for path in RUNTIME_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            assert all(root in sys.stdlib_module_names for root in roots), (path.name, roots)


@pytest.mark.parametrize("tier", TIERS)
def test_many_calls_in_flight_at_once(sandbox_at, bundle_dir, tier):
    """More calls in flight than a child may hold fds (the zygote keeps two per call): all still run."""
    write_bundle(
        bundle_dir,
        {
            "server/held.py": """
        def handle(request):
            request.records.get("gate", "wait")
            return request.body["n"]
    """
        },
    )
    arrived, release = threading.Semaphore(0), threading.Event()

    def broker(op, args):
        arrived.release()
        assert release.wait(30)
        return {}

    calls = 48
    with ThreadPoolExecutor(max_workers=calls) as pool:
        box = sandbox_at(tier)
        results = [
            pool.submit(box.run, Invocation(str(bundle_dir), "server/held.py", {"body": {"n": n}}), broker)
            for n in range(calls)
        ]
        for _ in range(calls):
            assert arrived.acquire(timeout=30)
        release.set()
        assert [r.result().body for r in results] == list(range(calls))
