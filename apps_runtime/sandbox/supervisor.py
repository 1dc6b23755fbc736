"""The host side: ``Sandbox.run`` sends each invocation through a warm zygote that forks a fresh child."""

import atexit
import dataclasses
import itertools
import logging
import os
import shutil
import sys
import tempfile
import threading

from .exceptions import RequestTooLarge
from .exchange import exchange
from .invocation import Broker, Invocation, Outcome
from .runtime import protocol
from .verdicts import judge, unavailable
from .zygote_process import ZygoteLost, ZygoteProcess

logger = logging.getLogger("apps_runtime.sandbox")


class Sandbox:
    """Runs untrusted handlers out of process. Thread-safe; one zygote serves all concurrent calls."""

    def __init__(self, *, python: str = sys.executable, scratch_root: str | None = None):
        """Prepare a sandbox; the zygote starts on the first call.

        ``scratch_root`` holds one scratch dir per call (the child's cwd, removed afterwards); by default a
        private temporary dir, removed by ``close()``.
        """
        self._python = python
        self._owns_scratch_root = scratch_root is None
        self._scratch_root = scratch_root or tempfile.mkdtemp(prefix="apps-sandbox-")
        os.makedirs(self._scratch_root, mode=0o700, exist_ok=True)
        self._lock = threading.Lock()
        self._zygote: ZygoteProcess | None = None
        self._call_ids = itertools.count(1)
        self._closed = False

    @property
    def zygote_pid(self) -> int | None:
        """Pid of the current zygote, or None before the first call (for operations and tests)."""
        zygote = self._zygote
        return zygote.pid if zygote is not None else None

    def run(self, invocation: Invocation, broker: Broker) -> Outcome:
        """Run one handler invocation; data calls go to ``broker`` in the calling thread.

        Raises:
            RequestTooLarge: the request's JSON exceeds ``limits.max_request_bytes`` (nothing ran).
            HandlerFailed: the handler failed, timed out, hit a limit, or could not be run.
            TypeError, ValueError: the request is not JSON, or ``bundle_dir`` is not absolute.
            RuntimeError: the sandbox is closed.
            Any exception of ``broker`` other than BrokerError (the child is killed first).
        """
        if self._closed:
            raise RuntimeError("this Sandbox is closed")
        if not os.path.isabs(invocation.bundle_dir):
            raise ValueError(f"bundle_dir must be an absolute path, got {invocation.bundle_dir!r}")
        limits = invocation.limits
        payload = protocol.dumps(invocation.request)
        if len(payload) > limits.max_request_bytes:
            raise RequestTooLarge(len(payload), limits.max_request_bytes)
        scratch_dir = tempfile.mkdtemp(prefix="call-", dir=self._scratch_root)
        config = {
            "bundle_dir": os.path.normpath(invocation.bundle_dir),
            "handler": invocation.handler,
            "scratch_dir": scratch_dir,
            "limits": dataclasses.asdict(limits),
        }
        try:
            transcript = None
            for attempt in range(2):
                zygote = self._current_zygote()
                if zygote is None:
                    break
                transcript = exchange(zygote, next(self._call_ids), config, payload, limits, broker)
                if not (transcript.zygote_lost or transcript.zygote_hung):
                    break
                self._discard(zygote)
                # Retry only a zygote found dead before it forked: no handler code ran and no time was spent.
                if transcript.zygote_hung or transcript.forked or attempt == 1:
                    break
        finally:
            shutil.rmtree(scratch_dir, ignore_errors=True)
        if transcript is None:
            raise unavailable(invocation, "the zygote cannot be started")
        return judge(invocation, transcript)

    def _current_zygote(self) -> ZygoteProcess | None:
        with self._lock:
            if self._closed:
                raise RuntimeError("this Sandbox is closed")
            zygote = self._zygote
            if zygote is not None and (zygote.owner_pid != os.getpid() or not zygote.alive()):
                if zygote.owner_pid == os.getpid():
                    zygote.terminate()
                # After os.fork() the zygote belongs to the parent process: leave it alone, start our own.
                zygote = self._zygote = None
            if zygote is None:
                try:
                    zygote = self._zygote = ZygoteProcess(self._python, self._scratch_root)
                except ZygoteLost:
                    logger.exception("Cannot start the sandbox zygote")
                    return None
            return zygote

    def _discard(self, zygote: ZygoteProcess) -> None:
        """Kill a dead or stuck zygote; the next call starts a new one."""
        with self._lock:
            if self._zygote is zygote:
                self._zygote = None
        logger.error("Sandbox zygote %s is gone or stuck; restarting it", zygote.pid)
        zygote.terminate()

    def close(self) -> None:
        """Stop the zygote (and any child still running) and remove the scratch root if we created it."""
        with self._lock:
            self._closed = True
            zygote, self._zygote = self._zygote, None
        if zygote is not None and zygote.owner_pid == os.getpid():
            zygote.close()
        if self._owns_scratch_root:
            shutil.rmtree(self._scratch_root, ignore_errors=True)


_instance: Sandbox | None = None
_instance_pid = 0
_instance_lock = threading.Lock()


def get_sandbox() -> Sandbox:
    """The process-wide Sandbox, created on first use (and again in a process made by ``os.fork``)."""
    global _instance, _instance_pid
    with _instance_lock:
        if _instance is None or _instance_pid != os.getpid():
            _instance = Sandbox()
            _instance_pid = os.getpid()
        return _instance


@atexit.register
def _close_at_exit() -> None:
    # Only the creating process owns the instance; a forked child exiting must not stop its parent's zygote.
    if _instance is not None and _instance_pid == os.getpid():
        _instance.close()


def _reset_after_fork() -> None:
    global _instance_lock
    # Another thread may have held the lock at fork time; the child's copy would stay locked forever.
    _instance_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)
