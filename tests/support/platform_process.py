"""The platform as an operator runs it: ``manage.py serve`` in a process of its own, on a database of its own.

For tests that kill the server, restart its database, or drive it from outside the way a client
does. Each ``PlatformProcess`` gets its own database (a SQLite file, or a fresh database on the
PostgreSQL server the test run uses) and its own var dir, so a SIGKILL or a hostile input touches
nothing of the test process. Set-up and checks run as ``manage.py shell -c`` in that database and
answer in JSON.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 60
# Variables of the test process that must not leak into the served platform.
_DROPPED_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CELERY_QUEUE", "BENCH_READY")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Database:
    """A scratch database: a SQLite file, or ``CREATE DATABASE`` on a PostgreSQL server (dropped after)."""

    def __init__(self, url: str, *, path: Path | None = None, admin_dsn: str | None = None, name: str = ""):
        self.url = url
        self.path = path
        self.admin_dsn = admin_dsn
        self.name = name

    @classmethod
    def sqlite(cls, path: Path) -> Database:
        return cls(f"sqlite:///{path}", path=path)

    @classmethod
    def postgres(cls, admin_dsn: str, *, template: str | None = None) -> Database:
        """A new database on the server of ``admin_dsn`` (a DSN of its ``postgres`` database)."""
        import psycopg

        name = f"platform_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return cls.postgres_named(admin_dsn, name)

    @classmethod
    def postgres_named(cls, admin_dsn: str, name: str) -> Database:
        """The database ``name`` that already is on the server of ``admin_dsn``."""
        return cls(
            admin_dsn.rsplit("/", 1)[0].replace("postgresql://", "postgres://") + f"/{name}",
            admin_dsn=admin_dsn,
            name=name,
        )

    def copy(self, workdir: Path) -> Database:
        """A new database holding what this one holds (nobody may be connected to this one)."""
        if self.path is not None:
            target = workdir / "platform.sqlite3"
            shutil.copyfile(self.path, target)
            return Database.sqlite(target)
        return Database.postgres(self.admin_dsn, template=self.name)

    def drop(self) -> None:
        if self.admin_dsn is None:
            return
        import psycopg

        try:
            with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        except psycopg.OperationalError:
            pass  # the server itself is gone (a private one a test has stopped)


def test_run_admin_dsn() -> str | None:
    """A DSN of the ``postgres`` database on the test run's PostgreSQL server; None on SQLite."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        return None
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgresql://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/postgres"


_templates: dict[str, Database] = {}
# Where the template (the SQLite file, or the PostgreSQL template's name) is kept: the test run's shared
# temporary folder when tests/conftest.py knows it, so the run's xdist workers migrate once between
# them (else once per process).
TEMPLATE_ROOT: Path | None = None


def migrated_database(workdir: Path) -> Database:
    """A fresh, migrated database on the test run's backend, for one platform process.

    Migrating takes seconds, so it happens once per test run, into a template that each platform gets
    a copy of (a file copy, or ``CREATE DATABASE ... TEMPLATE``).
    """
    admin_dsn = test_run_admin_dsn()
    key = admin_dsn or "sqlite"
    if key not in _templates:
        _templates[key] = _postgres_template(admin_dsn) if admin_dsn else _sqlite_template()
    return _templates[key].copy(workdir)


def _postgres_template(admin_dsn: str) -> Database:
    """The run's migrated PostgreSQL template: made by the first process to ask, under a lock.

    With ``TEMPLATE_ROOT`` (set by tests/conftest.py) the xdist workers share it, as they share the
    SQLite one: one ``migrate`` a run (8.6 s of CPU) instead of one per worker. Its name is kept in
    ``TEMPLATE_ROOT``, where ``drop_shared_template`` finds it once every worker is done.
    """
    if TEMPLATE_ROOT is None:
        template = Database.postgres(admin_dsn)
        atexit.register(template.drop)
        _migrate(template)
        return template
    record = TEMPLATE_ROOT / _POSTGRES_TEMPLATE_RECORD
    with open(TEMPLATE_ROOT / "platform-template-postgres.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not record.exists():
            template = Database.postgres(admin_dsn)
            _migrate(template)
            record.write_text(template.name)  # only once migrated: the others copy it from then on
    return Database.postgres_named(admin_dsn, record.read_text())


_POSTGRES_TEMPLATE_RECORD = "platform-template.postgres"


def _migrate(database: Database) -> None:
    try:
        PlatformProcess(_scratch_dir(), database.url).migrate()
    except BaseException:
        database.drop()
        raise


def drop_shared_template(root: Path) -> None:
    """Drop the run's shared PostgreSQL template, if one was made under ``root``: when every process is
    done with it."""
    record = root / _POSTGRES_TEMPLATE_RECORD
    if not record.exists():
        return  # no served platform on PostgreSQL in this run (or on SQLite): the settings stay unread
    admin_dsn = test_run_admin_dsn()
    if admin_dsn:
        Database.postgres_named(admin_dsn, record.read_text()).drop()
    record.unlink()


def _sqlite_template() -> Database:
    """The run's migrated SQLite file: made by the first process to ask, under a lock; read-only after."""
    root = TEMPLATE_ROOT or _scratch_dir()
    path = root / "platform-template.sqlite3"
    with open(root / "platform-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not path.exists():
            building = Database.sqlite(root / "platform-template.building.sqlite3")
            PlatformProcess(_scratch_dir(), building.url).migrate()
            os.replace(building.path, path)  # whole or absent for the processes waiting on the lock
    return Database.sqlite(path)


def _scratch_dir() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="platform-template-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return scratch


class PlatformProcess:
    """``manage.py serve`` on a free loopback port in its own process group, to kill like a dying machine."""

    def __init__(
        self,
        workdir: Path,
        database_url: str,
        env: dict[str, str] | None = None,
        serve_args: tuple[str, ...] = (),
    ):
        self.workdir = workdir
        self.database_url = database_url
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self._secret_key = secrets.token_urlsafe(40)  # one per platform: tokens outlive a restart
        self._extra_env = env or {}
        self._serve_args = serve_args  # more options for `manage.py serve` (--workers N, --host H)
        (workdir / "var").mkdir(parents=True, exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in _DROPPED_ENV}
        # Production-like: no DEBUG, so an unhandled error shows what a real caller would see.
        env.update(
            DEBUG="false",
            SECRET_KEY=self._secret_key,
            PUBLIC_BASE_URL=self.base_url,
            SANDBOX_MIN_TIER="3",  # the strongest tier the host has, as the suite's other tests use
            DATABASE_URL=self.database_url,
            PLATFORM_VAR_DIR=str(self.workdir / "var"),
            JOBS_IN_PROCESS_CLOCK="false",
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        env.update(self._extra_env)
        return env

    def manage(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run a management command against this platform's database.

        Raises:
            AssertionError: the command failed (its output is in the message).
        """
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise AssertionError(f"manage.py {args[0]} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        return done

    def python(self, code: str, timeout: float = 120) -> Any:
        """Run ``code`` in ``manage.py shell``; it must print one JSON value as its last line."""
        out = self.manage("shell", "-c", code, timeout=timeout).stdout.strip().splitlines()
        return json.loads(out[-1]) if out else None

    def migrate(self) -> None:
        # Every app's migrations on a fresh database: seconds on a quiet machine, but the suite runs
        # in parallel beside it (and a CI host may be busy), so it gets more than a command's default.
        self.manage("migrate", "--noinput", "-v", "0", timeout=360)

    def seed(self, *tenants: tuple[str, str]) -> list[dict]:
        """Each ``(slug, prefix)`` tenant with the test app, in one go; ``platform_seed.seed``'s answers."""
        calls = ", ".join(f"seed({slug!r}, {prefix!r})" for slug, prefix in tenants or [("acme", "")])
        return self.python(
            f"import json; from tests.support.platform_seed import seed; print(json.dumps([{calls}]))"
        )

    def start(self) -> None:
        """Start serving and wait until ``/healthz`` answers 200.

        Raises:
            RuntimeError: the server exited or did not answer within ``START_SECONDS``.
        """
        self.starts += 1
        log = open(self.log_path, "wb")  # noqa: SIM115 - the child writes to it until it dies
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port), *self._serve_args],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log_tail()}")
            if self.healthy():
                return
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"the server did not answer /healthz in {START_SECONDS}s:\n{self.log_tail()}")

    def healthy(self) -> bool:
        try:
            return httpx2.get(f"{self.base_url}/healthz", timeout=5).status_code == 200
        except httpx2.HTTPError:
            return False

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the server and everything in its process group (its sandbox too), as a power cut would."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        self.kill()

    @property
    def log_path(self) -> Path:
        return self.workdir / f"serve-{self.starts}.log"

    def log_tail(self, chars: int = 4000) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""
