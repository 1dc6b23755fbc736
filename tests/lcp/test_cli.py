"""``lcp`` as a user runs it: a subprocess against the live server, from login to dev, rollback and errors."""

from __future__ import annotations

import json
import os
import queue
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcp.cli import cli
from tests.support.platform_process import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 90  # generous: a loaded 2-core host


def _subprocess_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LCP_CONFIG_DIR": str(tmp_path / "config")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _checked(done: subprocess.CompletedProcess, check: int | None) -> subprocess.CompletedProcess:
    assert "Traceback" not in done.stderr, done.stderr
    if check is not None:
        assert done.returncode == check, (done.stdout, done.stderr)
    return done


@pytest.fixture
def lcp_process(tmp_path, live_url, transactional_db):
    """Run ``lcp ARGS`` as a user does, ``python -m lcp`` in a process of its own, in ``tmp_path`` with
    a config dir of its own; returns the finished process. For what only a real process shows: its
    exit status and its stderr as the shell gets them."""
    env = _subprocess_env(tmp_path)

    def run(*args: str, check: int | None = 0) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-m", "lcp", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return _checked(done, check)

    run.cwd = tmp_path
    return run


@pytest.fixture
def lcp(tmp_path, live_url, transactional_db):
    """Run ``lcp ARGS`` in this process (click's test runner), in ``tmp_path`` with a config dir of its own.

    The same command, arguments, exit status and output as ``lcp_process`` without starting an
    interpreter each time (0.9 s of CPU a call). An exception that click did not turn into an exit
    status fails the test: in a process it would be ``lcp: unexpected ...``, never a wanted outcome.
    ``run.env`` and ``run.cwd`` are for the tests that start ``lcp dev`` or ``lcp errors --follow``.
    """
    config = {"LCP_CONFIG_DIR": str(tmp_path / "config")}

    def run(*args: str, check: int | None = 0) -> subprocess.CompletedProcess:
        here = os.getcwd()
        os.chdir(tmp_path)  # the folders named on the command line are relative, as in a shell
        try:
            result = CliRunner().invoke(cli, list(args), env=config, prog_name="lcp")
        finally:
            os.chdir(here)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"lcp {' '.join(args)} raised {result.exception!r}") from result.exception
        return _checked(
            subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr), check
        )

    run.env = _subprocess_env(tmp_path)
    run.cwd = tmp_path
    return run


@pytest.fixture
def logged_in(lcp, live_url, acme, make_token):
    _, token = make_token(acme, "admin")
    lcp("login", live_url, "--tenant", "acme", "--token", token)
    return lcp


def test_login_checks_the_token_and_stores_it_for_the_owner_only(
    lcp, lcp_process, live_url, acme, make_token, tmp_path
):
    _, writer = make_token(acme, "writer")
    _, admin = make_token(acme, "admin")

    # Real processes: exit status 1 and the one line on stderr, as the shell gets them.
    missing = lcp_process("apps", check=1)
    assert missing.stderr.strip() == "lcp: not logged in: run `lcp login URL --tenant T --token TOKEN` first"
    down = lcp_process(
        "login", f"http://127.0.0.1:{free_port()}", "--tenant", "acme", "--token", admin, check=1
    )
    assert (
        down.stderr.startswith("lcp: cannot reach http://127.0.0.1:") and len(down.stderr.splitlines()) == 1
    )
    bad = lcp("login", live_url, "--tenant", "acme", "--token", "lcp_nope_nope", check=1)
    assert "token was refused" in bad.stderr
    member = lcp("login", live_url, "--tenant", "acme", "--token", writer, check=1)
    assert "needs a tenant admin's token" in member.stderr
    wrong_url = lcp("login", f"{live_url}/healthz/nowhere", "--tenant", "acme", "--token", admin, check=1)
    assert wrong_url.stderr.startswith("lcp: ") and len(wrong_url.stderr.splitlines()) == 1
    assert not (tmp_path / "config" / "config.json").exists()

    assert "logged in to" in lcp("login", live_url, "--tenant", "acme", "--token", admin).stdout
    stored = tmp_path / "config" / "config.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert json.loads(stored.read_text()) == {"url": live_url, "tenant": "acme", "token": admin}


def test_init_crud_validates_deploys_and_its_tools_answer(logged_in, lcp_process):
    lcp = logged_in
    lcp("init", "todo", "--template", "crud")
    validated = lcp("validate", "todo")
    assert "acme_todo_create_item" in validated.stdout.split()
    deployed = lcp("deploy", "todo")
    assert deployed.stdout.split() == [
        "acme_todo_list_items",
        "acme_todo_get_item",
        "acme_todo_create_item",
        "acme_todo_update_item",
        "acme_todo_delete_item",
    ]
    assert "todo v1 is live (5 tools)" in deployed.stderr and "warning" not in deployed.stderr

    created = json.loads(
        lcp("call", "acme_todo_create_item", "--args", '{"title": "Call the plumber"}').stdout
    )
    listed = json.loads(lcp("call", "acme_todo_list_items").stdout)
    assert listed["items"] == [{"id": created["id"], "title": "Call the plumber", "done": False}]
    as_json = json.loads(lcp("apps", "--json").stdout)
    assert [(a["name"], a["active_version"]) for a in as_json] == [("todo", 1)]

    refused = lcp("call", "acme_todo_get_item", "--args", '{"item_id": "nope"}', check=1)
    assert "no such item" in refused.stdout
    assert lcp("call", "acme_todo_nothing", check=1).stderr.startswith("lcp: no tool 'acme_todo_nothing'")
    # A real process: click's usage error is exit status 2.
    usage = lcp_process("call", "acme_todo_list_items", "--args", "[1", check=2)
    assert usage.returncode == 2


def test_validate_and_deploy_list_every_mistake_one_a_line(logged_in):
    lcp = logged_in
    lcp("init", "todo", "--template", "crud")
    app = lcp.cwd / "todo"
    manifest = json.loads((app / "app.json").read_text())
    manifest["mcp"]["tools"][0]["route"] = "GET /nowhere"
    (app / "app.json").write_text(json.dumps(manifest))
    (app / "server/items/get.py").write_text("def handle(request:\n")

    for command in ("validate", "deploy"):
        refused = lcp(command, "todo", check=1)
        lines = refused.stdout.splitlines()
        assert any(line.startswith("/mcp/tools/0/route: ") for line in lines), lines
        assert any(
            line.startswith("/routes/GET ~1items~1{item_id}/handler: server/items/get.py:1:")
            for line in lines
        )
        assert refused.stderr.strip().endswith(f"refused: {len(lines)} problems")
    as_json = json.loads(lcp("validate", "todo", "--json", check=1).stdout)
    assert as_json["ok"] is False and len(as_json["problems"]) == 2
    assert json.loads(lcp("apps", "--json").stdout) == []


def test_rollback_and_errors(logged_in):
    lcp = logged_in
    lcp("init", "todo", "--template", "crud")
    lcp("deploy", "todo")
    handler = lcp.cwd / "todo/server/items/list.py"
    handler.write_text('def handle(request):\n    print("about to fail")\n    return {"n": 1 / 0}\n')
    assert "todo v2 is live" in lcp("deploy", "todo").stderr

    failed = lcp("call", "acme_todo_list_items", check=1)
    error_id = next(word for word in failed.stdout.split() if word.startswith("err_")).strip(").,")
    shown = lcp("errors").stdout
    assert error_id in shown and "ZeroDivisionError" in shown and "about to fail" in shown
    assert "server/items/list.py" in shown

    rolled = lcp("rollback", "todo")
    assert "todo v1 is live" in rolled.stderr
    assert json.loads(lcp("call", "acme_todo_list_items").stdout) == {"items": []}
    unknown = lcp("rollback", "nothing", check=1)
    assert unknown.stderr.startswith("lcp: rollback refused: no deployed app 'nothing'")


def read_lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


def wait_for(lines: queue.Queue, seen: list[str], wanted) -> str:
    """The first line (from now on) for which ``wanted`` holds, within WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if wanted(line):
            return line
    raise AssertionError(f"not seen within {WAIT_SECONDS} s; output so far:\n" + "\n".join(seen))


def test_dev_deploys_each_save_names_the_changed_tools_and_streams_handler_logs_and_errors(logged_in):
    lcp = logged_in
    lcp("init", "todo", "--template", "crud")
    dev = subprocess.Popen(
        [sys.executable, "-m", "lcp", "dev", "todo", "--interval", "0.2"],
        cwd=lcp.cwd,
        env=lcp.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(dev.stdout, lines), daemon=True).start()
    seen: list[str] = []
    try:
        wait_for(lines, seen, lambda line: "todo v1 is live" in line)
        assert "+ acme_todo_create_item" in seen

        app = lcp.cwd / "todo/app.json"
        manifest = json.loads(app.read_text())
        manifest["mcp"]["tools"][0]["description"] = "List the items. Changed while dev was watching."
        app.write_text(json.dumps(manifest, indent=2))
        wait_for(lines, seen, lambda line: line == "~ acme_todo_list_items")
        wait_for(lines, seen, lambda line: "todo v2 is live" in line)

        # A successful call's logs are streamed too, and `lcp logs` lists them afterwards.
        (lcp.cwd / "todo/server/items/list.py").write_text(
            'def handle(request):\n    print("listing now")\n    request.log("info", "no items")\n'
            '    return {"items": []}\n'
        )
        wait_for(lines, seen, lambda line: "todo v3 is live" in line)
        lcp("call", "acme_todo_list_items")
        heading = wait_for(lines, seen, lambda line: "log of todo v3 GET /items" in line)
        assert heading.endswith("as admin (200)")
        wait_for(lines, seen, lambda line: line == "  listing now")
        wait_for(lines, seen, lambda line: line == "  [info] no items")
        listed = lcp("logs", "--app", "todo").stdout.splitlines()
        assert listed[-3].endswith("log of todo v3 GET /items as admin (200)")
        assert listed[-2:] == ["  listing now", "  [info] no items"]
        as_json = json.loads(lcp("logs", "--json", "--limit", "1").stdout)
        assert as_json["route_key"] == "GET /items" and as_json["status"] == 200

        (lcp.cwd / "todo/server/items/list.py").write_text(
            'def handle(request):\n    print("counting")\n    return {"n": 1 / 0}\n'
        )
        wait_for(lines, seen, lambda line: "todo v4 is live" in line)
        lcp("call", "acme_todo_list_items", check=1)
        wait_for(lines, seen, lambda line: line.startswith("err_") and "handler_error in todo v4" in line)
        wait_for(lines, seen, lambda line: "ZeroDivisionError" in line)
        wait_for(lines, seen, lambda line: line.strip() == "counting")

        (lcp.cwd / "todo/server/items/get.py").write_text("def handle(:\n")
        wait_for(lines, seen, lambda line: line.startswith("/routes/GET ~1items~1{item_id}/handler: "))
    finally:
        dev.send_signal(signal.SIGINT)
        dev.wait(timeout=30)
    # The handler's traceback is streamed indented; lcp's own never shows.
    assert not any(line.startswith("Traceback") for line in seen)


def test_errors_follow_prints_each_new_error_as_a_json_line(logged_in):
    lcp = logged_in
    lcp("init", "todo", "--template", "crud")
    (lcp.cwd / "todo/server/items/list.py").write_text("def handle(request):\n    raise KeyError('gone')\n")
    lcp("deploy", "todo")
    follow = subprocess.Popen(
        [sys.executable, "-m", "lcp", "errors", "--follow", "--json"],
        cwd=lcp.cwd,
        env=lcp.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(follow.stdout, lines), daemon=True).start()
    seen: list[str] = []
    try:
        failed = lcp("call", "acme_todo_list_items", check=1)
        error_id = next(word for word in failed.stdout.split() if word.startswith("err_")).strip(").,")
        line = wait_for(lines, seen, lambda line: error_id in line)
    finally:
        follow.send_signal(signal.SIGINT)
        follow.wait(timeout=30)
    error = json.loads(line)
    assert error["app"] == "todo" and error["route_key"] == "GET /items" and "KeyError" in error["trace"]


def test_lcp_test_runs_the_crud_example_and_fails_a_broken_handler(lcp_process):
    # Real processes throughout: `lcp test` runs pytest in a child that writes to the shell's stdout.
    lcp = lcp_process
    lcp("init", "todo", "--template", "crud")
    passed = lcp("test", "todo")
    assert "2 passed" in passed.stdout

    (lcp.cwd / "todo/server/items/create.py").write_text(
        "def handle(request):\n    return {'id': 1 / 0}, 201\n"
    )
    failed = lcp("test", "todo", check=1)
    assert "1 failed, 1 passed" in failed.stdout
    assert "Tool failed" in failed.stdout

    (lcp.cwd / "todo/server/items/create.py").write_text("def handle(:\n")
    refused = lcp("test", "todo", check=1)
    assert "the platform would refuse this app" in refused.stdout
    assert "/routes/POST ~1items/handler: server/items/create.py:1:" in refused.stdout
