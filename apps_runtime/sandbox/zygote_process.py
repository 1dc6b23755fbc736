"""Host-side handle on one zygote process: start it, hand it calls, kill it."""

import json
import os
import socket
import subprocess
import threading

BOOT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime", "boot.py")
START_TIMEOUT_S = 10.0
# A healthy zygote drains its control socket in microseconds; blocking longer than this means it hung.
SEND_TIMEOUT_S = 2.0


class ZygoteLost(Exception):
    """The zygote is gone or not answering; the caller should discard it."""


class ZygoteProcess:
    """A running zygote (``python -I -S boot.py``), with an empty environment and no inherited fds but its
    control socket. Thread-safe: many calls share one zygote.
    """

    def __init__(self, python: str, workdir: str):
        """Start the zygote and wait until it is ready.

        Raises:
            ZygoteLost: it did not start or did not report ready within START_TIMEOUT_S.
        """
        host_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [python, "-I", "-S", BOOT_SCRIPT, str(zygote_end.fileno())],
                env={},
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None,  # the zygote's own crashes land in the platform's log; children never hold it
                close_fds=True,
                pass_fds=(zygote_end.fileno(),),
                # A terminal's Ctrl-C is for the platform, which then closes the socket.
                start_new_session=True,
            )
        except OSError as exc:
            host_end.close()
            raise ZygoteLost(f"cannot start the zygote: {exc}") from exc
        finally:
            zygote_end.close()
        self._sock = host_end
        self._lock = threading.Lock()
        self._sock.settimeout(START_TIMEOUT_S)
        try:
            ready = json.loads(self._sock.recv(4096) or b"null")
        except (OSError, ValueError) as exc:
            self.terminate()
            raise ZygoteLost(f"the zygote did not start: {exc}") from exc
        if not isinstance(ready, dict) or not ready.get("ready"):
            self.terminate()
            raise ZygoteLost("the zygote did not report ready")
        self._sock.settimeout(SEND_TIMEOUT_S)
        self.pid: int = self._proc.pid
        self.owner_pid = os.getpid()

    def alive(self) -> bool:
        """False once the zygote has exited (it may also die between this check and the next send)."""
        return self._proc.poll() is None

    def spawn(self, call_id: int, config: dict, fds: list[int]) -> None:
        """Ask the zygote to fork a child for ``call_id`` with ``fds`` = [protocol, log, report].

        Raises:
            ZygoteLost: the zygote is gone or not reading its control socket.
        """
        message = json.dumps({"cmd": "spawn", "id": call_id, "config": config}).encode()
        try:
            socket.send_fds(self._sock, [message], fds)
        except OSError as exc:  # BrokenPipe/ConnectionReset: dead; TimeoutError: hung
            raise ZygoteLost(f"cannot reach the zygote: {exc!r}") from exc

    def kill_call(self, call_id: int) -> None:
        """Ask the zygote to SIGKILL the child of ``call_id`` (no-op if it already exited)."""
        try:
            self._sock.send(json.dumps({"cmd": "kill", "id": call_id}).encode())
        except OSError:
            pass  # a dead zygote took its children with it (PR_SET_PDEATHSIG)

    def terminate(self) -> None:
        """Kill the zygote; its children die with it (PR_SET_PDEATHSIG)."""
        with self._lock:
            try:
                self._proc.kill()
            except ProcessLookupError:
                pass
            self._proc.wait()
            self._sock.close()

    def close(self) -> None:
        """Stop the zygote gracefully: closing the control socket makes it kill its children and exit."""
        with self._lock:
            self._sock.close()
            try:
                self._proc.wait(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
