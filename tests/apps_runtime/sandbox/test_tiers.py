"""Isolation tiers: the start-up probe, the minimum tier, forcing a tier, and what works at each tier."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.conf import settings

from apps_runtime.sandbox import HandlerFailed, Invocation, Sandbox, SandboxUnavailable, get_sandbox
from apps_runtime.sandbox.supervisor import DEFAULT_UID_RANGE
from apps_runtime.sandbox.tiers import parse_tier

from .bundles import refuse_data_calls, write_bundle
from .conftest import TIERS

AS_ROOT = os.geteuid() == 0
ROOT = Path(__file__).resolve().parents[3]
ECHO = "def handle(request):\n    return {'echo': request.body}\n"


@pytest.fixture
def echo(bundle_dir) -> Invocation:
    write_bundle(bundle_dir, {"server/echo.py": ECHO})
    return Invocation(str(bundle_dir), "server/echo.py", {"body": {"hello": "world"}})


@pytest.fixture
def make_sandbox(bundles_root, tmp_path):
    boxes = []

    def make(**options) -> Sandbox:
        options.setdefault("bundle_root", str(bundles_root))
        box = Sandbox(scratch_root=str(tmp_path / f"scratch-{len(boxes)}"), **options)
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


@pytest.mark.parametrize("tier", TIERS)
def test_every_tier_is_available_on_this_host(sandbox_at, tier):
    # sandbox_at fails the test (it does not skip it) when the tier cannot start here.
    assert sandbox_at(tier).tier_level == tier


def test_the_probe_picks_the_strongest_tier_and_logs_it(make_sandbox, echo, caplog):
    box = make_sandbox()
    with caplog.at_level(logging.INFO, logger="apps_runtime.sandbox"):
        assert box.tier == "namespaces"

    assert box.tier_report == {"tier 1 (namespaces)": "ok"}
    assert box.run(echo, refuse_data_calls).body == {"echo": {"hello": "world"}}
    assert "isolation tier 1 (namespaces)" in caplog.text
    # The sandbox's own records: caplog also catches other threads of this worker process (a session
    # left open on the shared live server keeps its change poll running, refused the database here).
    sandbox = [r for r in caplog.records if r.name.startswith("apps_runtime.sandbox")]
    assert not [r for r in sandbox if r.levelno >= logging.WARNING]


def test_without_bubblewrap_the_probe_falls_back_to_tier_2_with_a_warning(make_sandbox, echo, caplog):
    box = make_sandbox(bwrap="/nonexistent/bwrap")
    with caplog.at_level(logging.INFO, logger="apps_runtime.sandbox"):
        assert box.tier == "landlock-seccomp"

    assert "bubblewrap is not installed" in box.tier_report["tier 1 (namespaces)"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("tier 2 (landlock-seccomp)" in m and "bubblewrap is not installed" in m for m in warnings)
    assert box.run(echo, refuse_data_calls).body == {"echo": {"hello": "world"}}


def test_without_a_bundle_root_tier_1_is_unavailable(tmp_path):
    box = Sandbox(scratch_root=str(tmp_path / "scratch"))
    try:
        assert box.tier == "landlock-seccomp"
        assert "no bundle_root" in box.tier_report["tier 1 (namespaces)"]
    finally:
        box.close()


def test_below_the_minimum_tier_the_sandbox_refuses_to_start(make_sandbox, echo, caplog):
    box = make_sandbox(bwrap="/nonexistent/bwrap", min_tier="namespaces")

    with pytest.raises(SandboxUnavailable) as refused:
        box.start()

    assert "tier 1 (namespaces)" in str(refused.value)
    assert "bubblewrap is not installed" in str(refused.value)
    assert set(refused.value.report) == {"tier 1 (namespaces)"}
    with pytest.raises(SandboxUnavailable):  # and keeps refusing, without probing again
        box.start()
    with pytest.raises(HandlerFailed) as failed:  # calls fail as 503s
        box.run(echo, refuse_data_calls)
    assert failed.value.kind == "sandbox_unavailable"
    assert failed.value.http_status == 503
    assert any(r.levelno == logging.ERROR and "no isolation tier" in r.getMessage() for r in caplog.records)


def test_a_forced_tier_weaker_than_the_minimum_is_refused(make_sandbox):
    with pytest.raises(SandboxUnavailable, match="weaker than the minimum"):
        make_sandbox(tier="rlimits", min_tier="landlock-seccomp").start()


def test_a_forced_tier_that_cannot_start_is_refused_not_replaced(make_sandbox):
    box = make_sandbox(tier=1, bwrap="/nonexistent/bwrap")

    with pytest.raises(SandboxUnavailable, match="no forced isolation tier"):
        box.start()
    assert list(box.tier_report) == ["tier 1 (namespaces)"]


def test_the_unconfined_tier_needs_min_tier_4(make_sandbox, echo):
    with pytest.raises(SandboxUnavailable):
        make_sandbox(tier="unconfined").start()

    box = make_sandbox(tier="unconfined", min_tier=4)
    assert box.tier == "unconfined"
    assert box.run(echo, refuse_data_calls).body == {"echo": {"hello": "world"}}


def test_tiers_parse_from_numbers_and_names():
    values = (1, "2", "rlimits", " Namespaces ", "landlock-seccomp", 4)
    assert [parse_tier(v) for v in values] == [1, 2, 3, 1, 2, 4]
    for bad in (0, 5, "strong", True, None):
        with pytest.raises(ValueError):
            parse_tier(bad)
    with pytest.raises(ValueError):
        Sandbox(min_tier="paranoid")


@pytest.mark.skipif(not AS_ROOT, reason="the uid drops happen only when the platform runs as root")
def test_tier_1_zygote_holds_only_the_power_to_switch_uids_and_kill_in_its_own_namespaces(sandbox_at):
    zygote = sandbox_at(1).zygote_pid
    with open(f"/proc/{zygote}/status") as f:
        status = dict(line.split(":", 1) for line in f)

    setuid_setgid_kill = f"{1 << 5 | 1 << 6 | 1 << 7:016x}"  # CAP_KILL, CAP_SETGID, CAP_SETUID
    assert status["CapEff"].strip() == status["CapPrm"].strip() == setuid_setgid_kill
    assert status["CapInh"].strip() == status["CapAmb"].strip() == "0" * 16
    assert status["NoNewPrivs"].strip() == "1"
    assert status["NSpid"].split()[1] == "1"  # pid 1 of its own PID namespace
    for ns in ("mnt", "net", "pid", "ipc", "uts"):
        assert os.readlink(f"/proc/{zygote}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"), ns


@pytest.mark.parametrize("tier", TIERS)
def test_handlers_run_as_a_uid_of_their_own_from_the_range_when_the_platform_is_root(run_at, tier):
    outcome = run_at(
        tier,
        """
        import os

        def handle(request):
            return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
    """,
    )

    if AS_ROOT:
        first, last = DEFAULT_UID_RANGE
        assert first <= outcome.body["uid"] <= last
        assert outcome.body == {"uid": outcome.body["uid"], "gid": outcome.body["uid"], "groups": []}
    else:
        assert outcome.body["uid"] == os.getuid()


@pytest.mark.parametrize("tier", TIERS)
def test_handlers_hold_no_capability_at_every_tier(run_at, tier):
    outcome = run_at(
        tier,
        """
        import ctypes

        def handle(request):
            libc = ctypes.CDLL(None, use_errno=True)
            header = (ctypes.c_uint32 * 2)(0x20080522, 0)
            data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; two words
            assert libc.capget(header, data) == 0
            ambient = [cap for cap in range(41) if libc.prctl(47, 1, cap, 0, 0) == 1]  # IS_SET
            return {"sets": list(data), "ambient": ambient}
    """,
    )

    assert outcome.body == {"sets": [0] * 6, "ambient": []}


# -- what still works at each tier -----------------------------------------------------------------------


@pytest.mark.parametrize("tier", TIERS)
def test_the_standard_library_works_at_every_tier(run_at, tier):
    outcome = run_at(
        tier,
        """
        import asyncio, csv, io, os, sqlite3, tempfile, zoneinfo
        from datetime import datetime

        async def double(n):
            await asyncio.sleep(0)
            return 2 * n

        def handle(request):
            db = sqlite3.connect(":memory:")  # an extension module and a system library, loaded lazily
            db.execute("create table t (n)")
            db.execute("insert into t values (21)")
            rows = list(csv.reader(io.StringIO("a,b\\n1,2\\n")))
            with tempfile.TemporaryFile() as f:  # in the scratch dir
                f.write(b"scratch")
                f.seek(0)
                scratch = f.read().decode()
            with open("kept.txt", "w") as f:
                f.write("cwd is writable")
            paris = zoneinfo.ZoneInfo("Europe/Paris")
            return {
                "sqlite": db.execute("select n from t").fetchone()[0],
                "csv": rows,
                "asyncio": asyncio.run(double(21)),  # its self-pipe is an AF_UNIX socketpair
                "zoneinfo": datetime(2024, 1, 1, tzinfo=paris).utcoffset().seconds,
                "scratch": scratch,
                "cwd": open("kept.txt").read(),
            }
    """,
    )

    assert outcome.body == {
        "sqlite": 21,
        "csv": [["a", "b"], ["1", "2"]],
        "asyncio": 42,
        "zoneinfo": 3600,
        "scratch": "scratch",
        "cwd": "cwd is writable",
    }


@pytest.mark.parametrize("tier", TIERS)
def test_threads_work_except_at_tier_3(run_at, tier):
    outcome = run_at(
        tier,
        """
        import threading

        def handle(request):
            results = []
            try:
                workers = [threading.Thread(target=results.append, args=(n,)) for n in range(4)]
                for w in workers:
                    w.start()
                for w in workers:
                    w.join()
            except RuntimeError as exc:
                return {"error": str(exc)}
            return {"results": sorted(results)}
    """,
    )

    if tier == 3 and AS_ROOT:  # RLIMIT_NPROC=0 counts threads too; seccomp (tiers 1-2) tells them apart
        assert outcome.body == {"error": "can't start new thread"}
    else:
        assert outcome.body == {"results": [0, 1, 2, 3]}


@pytest.mark.parametrize("tier", TIERS)
def test_tracebacks_show_bundle_relative_paths_at_every_tier(run_at, tier):
    with pytest.raises(HandlerFailed) as failed:
        run_at(
            tier,
            """
            import json

            def handle(request):
                return json.loads("{not json")
        """,
        )

    trace = failed.value.trace
    assert 'File "server/handler.py", line 5, in handle' in trace
    assert "JSONDecodeError" in trace
    assert "/proc/self" not in trace and "/tmp" not in trace and "json/decoder.py" not in trace


@pytest.mark.parametrize("tier", TIERS)
def test_timeouts_are_enforced_inside_the_sandbox_at_every_tier(run_at, tier):
    with pytest.raises(HandlerFailed) as failed:
        run_at(tier, "import time\n\ndef handle(request):\n    time.sleep(30)\n", timeout_ms=200)

    assert failed.value.kind == "handler_timeout"


# -- what an operator is told -----------------------------------------------------------------------------


def test_running_at_tier_3_is_logged_as_a_loud_warning(make_sandbox, caplog):
    with caplog.at_level(logging.INFO, logger="apps_runtime.sandbox"):
        make_sandbox(tier=3).start()

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("tier 3 (rlimits)" in m and "HANDLERS ARE WEAKLY CONFINED" in m for m in warnings)


@pytest.mark.parametrize(("tier", "loud"), [(None, False), ("3", True)])
def test_the_probe_command_prints_the_tier_and_warns_loudly_at_tier_3(bundles_root, tier, loud):
    argv = [sys.executable, "-m", "apps_runtime.sandbox", "--bundle-root", str(bundles_root)]
    probe = subprocess.run(
        argv + (["--tier", tier] if tier else []),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"]},
    )

    assert probe.returncode == 0
    assert probe.stdout.splitlines()[0] == ("tier 3 (rlimits)" if loud else "tier 1 (namespaces)")
    assert "scratch space per call: 64 MiB" in probe.stdout
    assert ("WARNING: handlers would run at tier 3" in probe.stderr) is loud


def test_the_platform_probes_for_the_strongest_tier_whatever_minimum_it_allows():
    # make demo runs with the default SANDBOX_MIN_TIER (2; 3 only when named); nothing may force a tier.
    assert settings.SANDBOX_TIER is None
    django_apps.get_app_config("apps_runtime").ready()  # the sandbox as the server configures it

    assert get_sandbox().tier == "namespaces"
