"""A PostgreSQL server of the test's own: initdb into a scratch folder, a free loopback port, trust auth.

For tests that restart the database under load: the machine's shared server (5432) serves other
people's tests and must never be restarted. The server runs as the ``postgres`` OS user when the
tests run as root (initdb refuses root), and is stopped and removed at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.platform_process import free_port

OS_USER = "postgres"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or None when PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


class PrivatePostgres:
    """One cluster in a scratch folder: ``start``, ``restart`` (fast mode, as operators do), ``remove``."""

    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="private-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_user = os.geteuid() == 0
        if self._as_user:
            user = pwd.getpwnam(OS_USER)
            os.chown(self.root, user.pw_uid, user.pw_gid)

    @property
    def admin_dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin_dir / tool), *args]
        if self._as_user:
            command = ["runuser", "-u", OS_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.root)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}\n{self.log_tail()}")

    def start(self) -> None:
        """initdb (once) and start, waiting until the server accepts connections.

        Raises:
            RuntimeError: initdb or pg_ctl failed (their output and the server log are in the message).
        """
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self._pg_ctl("start")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is cut, the server comes back on the same port."""
        self._pg_ctl("restart", "-m", "fast")

    def remove(self) -> None:
        if self.data.exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "-m", "immediate", "stop")
            except RuntimeError:
                pass  # already down
        shutil.rmtree(self.root, ignore_errors=True)

    def _pg_ctl(self, action: str, *args: str) -> None:
        # Loopback TCP only, its socket in its own folder: nothing of the shared server is touched.
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root}"
        common = ["-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", options]
        self._run("pg_ctl", *common, *args, action)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""
