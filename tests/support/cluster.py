"""The platform as production runs it, on one machine: replicas behind a real load balancer.

A private PostgreSQL cluster and a private Redis (never the machine's shared ones: the tests restart
them), ``manage.py serve`` replicas sharing them, a Celery worker and beat, and Debian's ``haproxy``
in front, configured as docs/production.md's "Behind a load balancer" prescribes: round-robin, no cookie
stickiness, a ``/healthz`` check, and only handshake-era MCP sessions routed by their
``Mcp-Session-Id``. Every process runs in a process group of its own on loopback ports, and
``Cluster.close`` ends all of them, whatever state the test left them in.

Used by ``tests/faults/test_replicas.py`` and ``bench/bench_soak.py``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from tests.faults.private_postgres import PrivatePostgres, binaries
from tests.support.platform_process import ROOT, Database, PlatformProcess, free_port

START_SECONDS = 90

PRODUCTION_DOC = ROOT / "docs" / "production.md"
# The haproxy configuration of docs/production.md's "Behind a load balancer", read from there so the test
# runs what operators are told to run: only its `bind` line and its servers are replaced.
_HAPROXY_BLOCK = re.compile(r"<!-- haproxy-config -->\n```text\n(?P<config>.*?)\n```", re.S)
# Which replica answered, for the tests (not in the docs: operators need not expose it).
_REPLICA_HEADER = "    http-response set-header X-Replica %[srv_name]"


def haproxy_config(port: int, replica_ports: list[int]) -> str:
    """docs/production.md's haproxy configuration, listening on ``port`` in front of ``replica_ports``."""
    found = _HAPROXY_BLOCK.search(PRODUCTION_DOC.read_text())
    if found is None:
        raise RuntimeError("docs/production.md has no <!-- haproxy-config --> block")
    lines = [line for line in found["config"].splitlines() if not line.strip().startswith("server ")]
    lines = [f"    bind 127.0.0.1:{port}" if line.strip().startswith("bind ") else line for line in lines]
    servers = [f"    server replica{n} 127.0.0.1:{p} check" for n, p in enumerate(replica_ports, start=1)]
    return "\n".join([*lines, _REPLICA_HEADER, *servers]) + "\n"


def wait_until(condition: Callable[[], bool], what: str | Callable[[], str], seconds: float) -> None:
    """Poll ``condition`` until true (``what`` may be a function, to describe the state at the end).

    Raises:
        AssertionError: still false after ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            described = what() if callable(what) else what
            raise AssertionError(f"timed out after {seconds:.0f}s waiting for {described}")
        time.sleep(0.1)


class Process:
    """A command in its own process group, its output in a log file."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], workdir: Path):
        self.name, self.command, self.env, self.workdir = name, command, env, workdir
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}-{self.starts}.log"

    def start(self) -> None:
        self.starts += 1
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, wait: float = 20) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def log_tail(self, chars: int = 3000) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


class PrivateRedis:
    """``redis-server`` on a free loopback port, appending every write to disk before answering, so a
    restart loses no message Celery was told had been queued."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.dir = workdir / "redis"
        self.dir.mkdir(parents=True, exist_ok=True)
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        command += ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no"]
        self.process = Process("redis", command, dict(os.environ), self.dir)

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process.start()
        wait_until(self._answers, "redis to answer", 30)

    def restart(self) -> None:
        """SIGTERM (Redis finishes its append-only file), then the same server on the same port."""
        self.process.stop()
        self.start()

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


class Balancer:
    """haproxy in the foreground, round-robin over ``ports``."""

    def __init__(self, workdir: Path, ports: list[int]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(haproxy_config(self.port, ports))
        self.process = Process(
            "haproxy", ["haproxy", "-db", "-f", str(self.config)], dict(os.environ), workdir
        )

    def start(self) -> None:
        self.process.start()
        wait_until(self._serves, "haproxy to serve /healthz", START_SECONDS)

    def _serves(self) -> bool:
        if not self.process.alive:
            raise RuntimeError(f"haproxy exited:\n{self.process.log_tail()}")
        try:
            return httpx2.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx2.HTTPError:
            return False


SEED = """
import json
from apps_runtime.deploy import deploy_bundle
from apps_runtime.manifest import bundle_from_mapping
from tenants.models import Tenant
from tests.support.platform_seed import seed
from tests.support.task_app import TASK_FILES, task_manifest
answer = seed("acme", "")
reports = bundle_from_mapping(task_manifest(), TASK_FILES)
deploy_bundle(Tenant.objects.get(slug="acme"), reports, acting_user=None)
print(json.dumps(answer))
"""


class Cluster:
    """PostgreSQL, Redis, ``replicas`` servers, a Celery worker and beat, and haproxy in front.

    ``tokens``: the ``platform_seed`` people's tokens of tenant ``acme`` (the test app ``cases`` and
    the task app ``reports``).
    """

    def __init__(self, workdir: Path, replicas: int = 3, env: dict[str, str] | None = None):
        bin_dir = binaries()
        if bin_dir is None:
            raise RuntimeError("the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are not installed")
        self.workdir = workdir
        self.postgres = PrivatePostgres(bin_dir)
        self.redis = PrivateRedis(workdir)
        self.database: Database | None = None
        self.replica_count = replicas
        self.extra_env = env or {}
        self.replicas: list[PlatformProcess] = []
        self.celery: list[Process] = []
        self.balancer: Balancer | None = None
        self.tokens: dict[str, str] = {}

    @property
    def url(self) -> str:
        assert self.balancer is not None
        return self.balancer.url

    def env(self) -> dict[str, str]:
        """What every process of the platform shares (the replicas add their own var dir and port)."""
        return {
            "DATABASE_URL": self.database.url,
            "SECRET_KEY": self._secret_key,
            "CELERY_BROKER_URL": self.redis.url(0),
            "RATE_LIMIT_REDIS_URL": self.redis.url(1),
            "PUBLIC_BASE_URL": self._public_url,
            # Quick fault recovery for a test of a couple of minutes: the beat entries (job
            # dispatch, the task sweep that resends a task whose message was lost) every 2 s.
            "JOBS_DISPATCH_EVERY_SECONDS": "2",
            "TASK_RESEND_SECONDS": "5",
            "MCP_NOTIFY_INTERVAL_SECONDS": "0.5",
            **self.extra_env,
        }

    def start(self) -> Cluster:
        """Bring everything up; on any failure, tear down what started and re-raise."""
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        self._secret_key = secrets.token_urlsafe(50)
        ports = [free_port() for _ in range(self.replica_count)]
        self.balancer = Balancer(self.workdir, ports)
        self._public_url = self.balancer.url
        self.postgres.start()
        self.database = Database.postgres(self.postgres.admin_dsn)
        self.redis.start()
        for n, port in enumerate(ports, start=1):
            replica = PlatformProcess(self.workdir / f"replica{n}", self.database.url, env=self.env())
            replica.port, replica.base_url = port, f"http://127.0.0.1:{port}"
            self.replicas.append(replica)
        first = self.replicas[0]
        first.migrate()
        self.tokens = first.python(SEED)["tokens"]
        for replica in self.replicas:
            replica.manage("collectstatic", "--noinput", "-v", "0")
            replica.start()
        celery_env = {**first.env, "PLATFORM_VAR_DIR": str(self.workdir / "celery")}
        celery = [sys.executable, "-m", "celery", "-A", "lowcode_platform"]
        self.celery = [
            Process(
                "worker",
                [*celery, "worker", "-l", "info", "-c", "2", "--without-gossip"],
                celery_env,
                self.workdir,
            ),
            Process(
                "beat",
                [*celery, "beat", "-l", "info", "-s", str(self.workdir / "celerybeat-schedule")],
                celery_env,
                self.workdir,
            ),
        ]
        for process in self.celery:
            process.start()
        self.balancer.start()

    def kill_replica(self, index: int) -> None:
        """SIGKILL one replica and its sandbox, as a dying machine would."""
        self.replicas[index].kill()

    def close(self) -> None:
        """Stop every process this cluster started and remove the private servers' data."""
        if self.balancer is not None:
            self.balancer.process.stop()
        for process in self.celery:
            process.stop()
        for replica in self.replicas:
            with contextlib.suppress(Exception):
                replica.stop()
        self.redis.process.stop()
        if self.database is not None:
            self.database.drop()
        self.postgres.remove()

    def logs(self) -> str:
        """The tail of every process's log, for a failure message."""
        parts = [f"--- {r.base_url}\n{r.log_tail(1500)}" for r in self.replicas]
        parts += [f"--- {p.name}\n{p.log_tail(1500)}" for p in self.celery]
        if self.balancer is not None:
            parts.append(f"--- haproxy\n{self.balancer.process.log_tail(1500)}")
        return "\n".join(parts)


def scratch_dir(prefix: str) -> Path:
    """A folder for a cluster run outside pytest (the soak), removed by the caller."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
