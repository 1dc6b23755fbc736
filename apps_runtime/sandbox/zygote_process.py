"""Host-side handle on one zygote process: start it (possibly inside bubblewrap), hand it calls, kill it."""

import concurrent.futures
import logging
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from typing import NoReturn

from .runtime import protocol
from .tiers import LaunchSpec

START_TIMEOUT_S = 10.0
# A healthy zygote drains its control socket in microseconds; blocking longer than this means it hung.
SEND_TIMEOUT_S = 2.0
# After the wrapper (bwrap) is killed, the namespace's processes die with it; wait this long for that.
TEARDOWN_TIMEOUT_S = 3.0
_UCRED = struct.Struct("3i")  # pid, uid, gid
_MAX_STDERR = 16 * 1024

logger = logging.getLogger("apps_runtime.sandbox")


_launcher: concurrent.futures.ThreadPoolExecutor | None = None
_launcher_pid = 0
_launcher_lock = threading.Lock()


def _launch(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """Run ``start`` in a thread that lives as long as this process. bubblewrap's --die-with-parent (a
    parent-death signal) fires when the *thread* that forked it exits: a zygote started from a short-lived
    thread (a request's, a pool's) would die with it, in the middle of other calls.
    """
    global _launcher, _launcher_pid
    with _launcher_lock:
        if _launcher is None or _launcher_pid != os.getpid():  # after os.fork() the thread is gone
            _launcher = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sandbox-launcher")
            _launcher_pid = os.getpid()
        launcher = _launcher
    return launcher.submit(start).result()


def _reset_after_fork() -> None:
    global _launcher_lock
    _launcher_lock = threading.Lock()  # another thread may have held it at fork time


os.register_at_fork(after_in_child=_reset_after_fork)


class ZygoteLost(Exception):
    """The zygote is gone, not answering, or failed its start-up self-test; the caller should discard it."""


class ZygoteProcess:
    """A running zygote (``python -I -S boot.py``, inside bubblewrap at tier 1), with an empty environment
    and no inherited fds but its control socket. Thread-safe: many calls share one zygote.

    ``pid`` is the zygote's pid as the host sees it (learned from SCM_CREDENTIALS, so it is right even inside
    a PID namespace); ``ready`` is its start-up report (tier, self-test results), once it started.
    """

    def __init__(self, spec: LaunchSpec):
        """Start the zygote and wait until it reports ready.

        Raises:
            ZygoteLost: it did not start, failed its self-test, runs as the wrong uid, or did not report
                within START_TIMEOUT_S.
        """
        host_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The kernel then attaches the sender's pid and uid (translated to our namespaces) to what we read.
        host_end.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        try:
            self._proc = _launch(
                lambda: subprocess.Popen(
                    spec.argv(zygote_end.fileno()),
                    env={},
                    cwd=spec.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    # Start-up errors (bwrap's) explain an unusable tier; later ones are logged.
                    stderr=subprocess.PIPE,
                    close_fds=True,
                    pass_fds=(zygote_end.fileno(),),
                    # bwrap creates the mount points' parents: the sandbox uid must traverse them.
                    umask=0o022,
                    # A terminal's Ctrl-C is for the platform, which then closes the socket.
                    start_new_session=True,
                )
            )
        except OSError as exc:
            host_end.close()
            raise ZygoteLost(f"cannot start the zygote: {exc}") from exc
        finally:
            zygote_end.close()
        self._sock = host_end
        self._lock = threading.Lock()
        self._pidfds: list[int] = []
        self.pid: int = self._proc.pid
        self.owner_pid = os.getpid()
        self.ready: protocol.Ready | None = None
        self._sock.settimeout(START_TIMEOUT_S)
        try:
            message, creds = self._receive_ready()
            if not message:
                self._fail("the zygote exited before reporting ready")
            ready = protocol.Ready.decode(message)
        except (OSError, ValueError) as exc:
            self._fail(f"the zygote did not start: {exc!r}")
        self.ready = ready
        if not ready.ready:
            problems = ready.selftest.get("problems", [])
            detail = ready.error or "; ".join(map(str, problems))
            self._fail(f"the zygote's self-test failed: {detail or ready}")
        if creds is not None:
            pid, uid, _gid = creds
            if uid != spec.expected_uid:
                self._fail(f"the zygote runs as uid {uid}, expected {spec.expected_uid}")
            self.pid = pid
        # Inside bubblewrap the zygote is a grandchild: track it (and an init between us, if any) by pidfd.
        self._pidfds = []
        for pid in {self.pid, _parent_of(self.pid)} - {self._proc.pid, None, os.getpid()}:
            try:
                self._pidfds.append(os.pidfd_open(pid))
            except OSError:
                pass
        self._sock.settimeout(SEND_TIMEOUT_S)
        threading.Thread(target=self._forward_stderr, name=f"zygote-{self.pid}-stderr", daemon=True).start()

    def _receive_ready(self) -> tuple[bytes, tuple[int, int, int] | None]:
        message, ancillary, _flags, _addr = self._sock.recvmsg(
            protocol.MAX_CONTROL_MESSAGE, socket.CMSG_SPACE(_UCRED.size)
        )
        creds = None
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _UCRED.size:
                creds = _UCRED.unpack(data[: _UCRED.size])
        return message, creds

    def _fail(self, reason: str) -> NoReturn:
        """Kill what started, add its stderr to the reason, raise ZygoteLost."""
        self.terminate()
        stderr = b""
        try:
            stderr = self._proc.stderr.read(_MAX_STDERR)
        except (OSError, ValueError):
            pass
        finally:
            self._proc.stderr.close()
        text = stderr.decode("utf-8", "replace").strip()
        raise ZygoteLost(f"{reason}: {text}" if text else reason)

    def _forward_stderr(self) -> None:
        # The zygote writes here only when it crashes (children never hold it); never let the pipe fill up.
        try:
            for line in self._proc.stderr:
                logger.error("sandbox zygote %s: %s", self.pid, line.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

    def alive(self) -> bool:
        """False once the zygote has exited (it may also die between this check and the next send)."""
        return self._proc.poll() is None

    def spawn(self, spawn: protocol.Spawn, fds: list[int]) -> None:
        """Ask the zygote to fork a (spare) child with ``fds`` = [protocol, log, report].

        Raises:
            ZygoteLost: the zygote is gone or not reading its control socket.
        """
        try:
            socket.send_fds(self._sock, [spawn.encode()], fds)
        except OSError as exc:  # BrokenPipe/ConnectionReset: dead; TimeoutError: hung
            raise ZygoteLost(f"cannot reach the zygote: {exc!r}") from exc

    def arm(self, call_id: int, deadline: float) -> None:
        """Tell the zygote that the spare of ``call_id`` got its call: SIGKILL it at ``deadline``
        (``time.monotonic()``, the same clock in the sandbox).

        Raises:
            ZygoteLost: the zygote is gone or not reading its control socket.
        """
        try:
            self._sock.send(protocol.Arm(call_id, deadline).encode())
        except OSError as exc:
            raise ZygoteLost(f"cannot reach the zygote: {exc!r}") from exc

    def kill_call(self, call_id: int) -> None:
        """Ask the zygote to SIGKILL the child of ``call_id`` (no-op if it already exited)."""
        try:
            self._sock.send(protocol.Kill(call_id).encode())
        except OSError:
            pass  # a dead zygote took its children with it (PR_SET_PDEATHSIG)

    def terminate(self) -> None:
        """Kill the whole sandbox: the wrapper (bubblewrap, whose namespace dies with it), the zygote and so
        every child (PR_SET_PDEATHSIG). Returns once the zygote is gone.
        """
        with self._lock:
            # The zygote first: its parent (bubblewrap, or us) then reaps it, instead of the host's init.
            self._kill_zygote()
            try:
                self._proc.wait(timeout=TEARDOWN_TIMEOUT_S if self._pidfds else 0)
            except subprocess.TimeoutExpired:
                pass
            self._kill_wrapper()
            self._proc.wait()
            self._await_zygote_exit()
            self._sock.close()

    def _kill_wrapper(self) -> None:
        try:
            self._proc.kill()
        except ProcessLookupError:
            pass

    def _kill_zygote(self) -> None:
        for pidfd in self._pidfds:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)  # a pidfd cannot hit a recycled pid
            except ProcessLookupError:
                pass

    def _await_zygote_exit(self) -> None:
        deadline = time.monotonic() + TEARDOWN_TIMEOUT_S
        for pidfd in self._pidfds:
            # Readable once the process has exited; a zombie may still need a moment to be reaped.
            select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))
            pid = _pid_of(pidfd)
            while pid is not None and time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
                time.sleep(0.002)
            os.close(pidfd)
        self._pidfds = []

    def close(self) -> None:
        """Stop the zygote gracefully: closing the control socket makes it kill its children and exit."""
        with self._lock:
            self._sock.close()
            try:
                self._proc.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._kill_wrapper()
                self._kill_zygote()
                self._proc.wait()
            self._await_zygote_exit()


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _pid_of(pidfd: int) -> int | None:
    try:
        with open(f"/proc/self/fdinfo/{pidfd}") as f:
            for line in f:
                if line.startswith("Pid:"):
                    pid = int(line.split()[1])
                    return pid if pid > 0 else None
    except (OSError, ValueError):
        pass
    return None
