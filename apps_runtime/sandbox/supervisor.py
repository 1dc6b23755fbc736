"""The host side: ``Sandbox.run`` sends each invocation through a warm zygote that forks a fresh child.

At start-up the sandbox probes the isolation tiers (see ``tiers.py``) strongest first and keeps the first
that starts and passes its self-test; below ``min_tier`` it refuses to run anything (SandboxUnavailable).
"""

import atexit
import dataclasses
import itertools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from . import tiers
from .exceptions import RequestTooLarge, SandboxUnavailable
from .exchange import exchange
from .fairshare import TenantGate
from .invocation import Broker, Invocation, Outcome
from .runtime import protocol
from .verdicts import judge, queue_timeout, unavailable
from .zygote_process import ZygoteLost, ZygoteProcess

logger = logging.getLogger("apps_runtime.sandbox")

SANDBOX_UID = 65534  # "nobody" on Debian; the uid every handler runs as when the platform runs as root
SANDBOX_GID = 65534  # "nogroup"


class Sandbox:
    """Runs untrusted handlers out of process. Thread-safe; one zygote serves all concurrent calls."""

    def __init__(
        self,
        *,
        python: str = sys.executable,
        scratch_root: str | None = None,
        bundle_root: str | None = None,
        min_tier: int | str = tiers.RLIMITS,
        tier: int | str | None = None,
        max_concurrent_per_tenant: int = 4,
        queue_timeout_ms: int = 5000,
        bwrap: str = "bwrap",
        sandbox_uid: int = SANDBOX_UID,
        sandbox_gid: int = SANDBOX_GID,
    ):
        """Prepare a sandbox; the tier probe and the zygote start on ``start()`` or the first call.

        ``scratch_root`` holds one scratch dir per call (the child's cwd, removed afterwards); by default a
        private temporary dir, removed by ``close()``. ``bundle_root`` is the directory every
        ``Invocation.bundle_dir`` lies in (mounted read-only at tier 1, which needs it); calls for bundles
        elsewhere are refused. ``min_tier`` is the weakest isolation tier accepted (1 strongest ... 3), by
        number or name; ``tier`` forces one tier instead of probing (tests, benchmarks; "unconfined", tier 4,
        is accepted only with ``min_tier`` 4). ``max_concurrent_per_tenant`` bounds the runs in flight per
        ``Invocation.tenant_key``; a run waiting longer than ``queue_timeout_ms`` for a slot fails with
        HandlerFailed("sandbox_unavailable"). When the platform runs as root, handlers run as
        ``sandbox_uid``/``sandbox_gid``.

        Raises:
            ValueError: an unknown tier, or a non-positive limit.
        """
        self._python = python
        self._min_level = tiers.parse_tier(min_tier)
        self._forced_level = tiers.parse_tier(tier) if tier is not None else None
        if type(queue_timeout_ms) is not int or queue_timeout_ms < 0:
            raise ValueError(f"queue_timeout_ms must be a non-negative int, got {queue_timeout_ms!r}")
        self._gate = TenantGate(max_concurrent_per_tenant)
        self._queue_timeout_s = queue_timeout_ms / 1000
        self._bwrap = bwrap
        self._uid, self._gid = sandbox_uid, sandbox_gid
        self._drops_uid = os.geteuid() == 0
        self._bundle_root = os.path.realpath(bundle_root) if bundle_root is not None else None
        self._owns_scratch_root = scratch_root is None
        self._scratch_root = os.path.realpath(scratch_root or tempfile.mkdtemp(prefix="apps-sandbox-"))
        os.makedirs(self._scratch_root, mode=0o700, exist_ok=True)
        if self._drops_uid:
            # The sandbox uid must reach its own call dir (0700, its own) by path, but may not list others.
            os.chmod(self._scratch_root, 0o711)
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._zygote: ZygoteProcess | None = None
        self._spec: tiers.LaunchSpec | None = None
        self._start_error: SandboxUnavailable | None = None
        self._report: dict[str, str] = {}
        self._call_ids = itertools.count(1)
        self._closed = False

    # -- operations -----------------------------------------------------------------------------------------
    @property
    def zygote_pid(self) -> int | None:
        """Host pid of the current zygote, or None before the first call (for operations and tests)."""
        zygote = self._zygote
        return zygote.pid if zygote is not None else None

    @property
    def tier(self) -> str:
        """Name of the isolation tier in use ("namespaces", "landlock-seccomp", "rlimits"); starts the
        sandbox if needed.

        Raises:
            SandboxUnavailable: no acceptable tier works here.
        """
        return tiers.TIER_NAMES[self.tier_level]

    @property
    def tier_level(self) -> int:
        """Number of the isolation tier in use: 1 is the strongest."""
        self.start()
        return self._spec.level

    @property
    def tier_report(self) -> dict[str, str]:
        """For each tier probed: "ok", or why it is unavailable here (after ``start()``)."""
        return dict(self._report)

    @property
    def bundle_root(self) -> str | None:
        return self._bundle_root

    def start(self) -> str:
        """Probe the tiers and start the zygote at the strongest that works; idempotent. Returns the tier.

        Raises:
            SandboxUnavailable: nothing at least as strong as ``min_tier`` works (or the forced tier does
                not); the same error is raised again on every later call.
            RuntimeError: the sandbox is closed.
        """
        with self._start_lock:
            if self._closed:
                raise RuntimeError("this Sandbox is closed")
            if self._spec is not None:
                return tiers.TIER_NAMES[self._spec.level]
            if self._start_error is not None:
                raise self._start_error
            try:
                self._probe()
            except SandboxUnavailable as exc:
                self._start_error = exc
                logger.error("%s", exc)
                raise
            return tiers.TIER_NAMES[self._spec.level]

    def _probe(self) -> None:
        if self._forced_level is not None:
            if self._forced_level > self._min_level:
                raise SandboxUnavailable(
                    f"Handler sandbox: forced {tiers.tier_label(self._forced_level)} is weaker than the "
                    f"minimum allowed, {tiers.tier_label(self._min_level)}")
            candidates = [self._forced_level]
        else:  # strongest first; nothing weaker than the minimum is even tried
            candidates = [level for level in (tiers.NAMESPACES, tiers.LANDLOCK_SECCOMP, tiers.RLIMITS)
                          if level <= self._min_level]
        for level in candidates:
            label = tiers.tier_label(level)
            reason = tiers.precheck(level, bwrap=self._bwrap, bundle_root=self._bundle_root)
            if reason is None:
                try:
                    spec = self._launch_spec(level)
                    zygote = ZygoteProcess(spec)
                except (ZygoteLost, OSError, ValueError, subprocess.SubprocessError) as exc:
                    reason = str(exc) or type(exc).__name__
            if reason is not None:
                self._report[label] = reason
                continue
            self._report[label] = "ok"
            self._spec, self._zygote = spec, zygote
            self._log_tier()
            return
        forced = "forced " if self._forced_level is not None else ""
        details = "; ".join(f"{label}: {reason}" for label, reason in self._report.items())
        raise SandboxUnavailable(
            f"Handler sandbox: no {forced}isolation tier at least as strong as "
            f"{tiers.tier_label(self._min_level)} works on this host ({details})", self._report)

    def _log_tier(self) -> None:
        level = self._spec.level
        others = "; ".join(f"{label}: {reason}" for label, reason in self._report.items() if reason != "ok")
        how = "forced" if self._forced_level is not None else "probed"
        if level == tiers.NAMESPACES:
            logger.info("Handler sandbox: isolation %s (%s), zygote pid %s", tiers.tier_label(level), how,
                        self._zygote.pid)
        else:
            logger.warning(
                "Handler sandbox: isolation %s (%s), below tier 1 (namespaces)%s",
                tiers.tier_label(level), how, f"; unavailable here: {others}" if others else "",
            )

    def _launch_spec(self, level: int) -> tiers.LaunchSpec:
        return tiers.launch_spec(level, python=self._python, bwrap=self._bwrap, bundle_root=self._bundle_root,
                                 scratch_root=self._scratch_root, uid=self._uid, gid=self._gid)

    # -- calls ----------------------------------------------------------------------------------------------
    def run(self, invocation: Invocation, broker: Broker) -> Outcome:
        """Run one handler invocation; data calls go to ``broker`` in the calling thread.

        Raises:
            RequestTooLarge: the request's JSON exceeds ``limits.max_request_bytes`` (nothing ran).
            HandlerFailed: the handler failed, timed out, hit a limit, or could not be run (no acceptable
                isolation tier, or the tenant's fair share stayed full for ``queue_timeout_ms``).
            TypeError, ValueError: the request is not JSON, or ``bundle_dir`` is not an absolute path
                inside ``bundle_root``.
            RuntimeError: the sandbox is closed.
            Any exception of ``broker`` other than BrokerError (the child is killed first).
        """
        if self._closed:
            raise RuntimeError("this Sandbox is closed")
        bundle_dir = self._check_bundle_dir(invocation.bundle_dir)
        limits = invocation.limits
        payload = protocol.dumps(invocation.request)
        if len(payload) > limits.max_request_bytes:
            raise RequestTooLarge(len(payload), limits.max_request_bytes)
        key = invocation.tenant_key
        if key is not None and not self._gate.enter(key, self._queue_timeout_s):
            waited = f"{self._queue_timeout_s * 1000:.0f} ms"
            raise queue_timeout(invocation, f"tenant {key!r} already has {self._gate.limit} handler runs in "
                                            f"flight; waited {waited} for a slot")
        try:
            try:
                self.start()
            except SandboxUnavailable as exc:
                raise unavailable(invocation, str(exc)) from None
            return self._run(invocation, bundle_dir, payload, broker)
        finally:
            if key is not None:
                self._gate.leave(key)

    def _check_bundle_dir(self, bundle_dir: str) -> str:
        if not os.path.isabs(bundle_dir):
            raise ValueError(f"bundle_dir must be an absolute path, got {bundle_dir!r}")
        if self._bundle_root is None:
            return os.path.normpath(bundle_dir)
        real = os.path.realpath(bundle_dir)
        if not real.startswith(self._bundle_root + os.sep):
            raise ValueError(f"bundle_dir {bundle_dir!r} is not inside the bundle root {self._bundle_root!r}")
        return real

    def _run(self, invocation: Invocation, bundle_dir: str, payload: bytes, broker: Broker) -> Outcome:
        limits = invocation.limits
        scratch_dir = tempfile.mkdtemp(prefix="call-", dir=self._scratch_root)
        if self._drops_uid and self._spec.level < tiers.UNCONFINED:
            os.chown(scratch_dir, self._uid, self._gid)
        config = {
            "bundle_dir": bundle_dir,
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
                    # Same tier as probed, never a weaker one: if it stops working, calls fail instead.
                    zygote = self._zygote = ZygoteProcess(self._spec)
                except ZygoteLost:
                    label = tiers.tier_label(self._spec.level)
                    logger.exception("Cannot start the sandbox zygote at %s", label)
                    return None
            return zygote

    def _discard(self, zygote: ZygoteProcess) -> None:
        """Kill a dead or stuck sandbox (at tier 1 the whole bubblewrap tree); the next call starts anew."""
        with self._lock:
            if self._zygote is zygote:
                self._zygote = None
        logger.error("Sandbox zygote %s is gone or stuck; restarting it", zygote.pid)
        zygote.terminate()

    def close(self) -> None:
        """Stop the zygote (and any child still running) and remove the scratch root if we created it."""
        with self._start_lock, self._lock:
            self._closed = True
            zygote, self._zygote = self._zygote, None
        if zygote is not None and zygote.owner_pid == os.getpid():
            zygote.close()
        if self._owns_scratch_root:
            shutil.rmtree(self._scratch_root, ignore_errors=True)


_instance: Sandbox | None = None
_instance_pid = 0
_instance_lock = threading.Lock()
_options: dict = {}


def configure_sandbox(**options) -> None:
    """Set the ``Sandbox`` options of the process-wide instance (``bundle_root``, ``min_tier``, ``tier``...).

    Closes the current instance, if any; the next ``get_sandbox()`` builds one with these options.

    Raises:
        TypeError, ValueError: an unknown option or value (checked now, by building a throwaway Sandbox).
    """
    global _instance, _options
    Sandbox(**options).close()  # validates without starting anything
    with _instance_lock:
        old, _instance = (_instance if _instance_pid == os.getpid() else None), None
        _options = dict(options)
    if old is not None:
        old.close()


def get_sandbox() -> Sandbox:
    """The process-wide Sandbox, created on first use (and again in a process made by ``os.fork``)."""
    global _instance, _instance_pid
    with _instance_lock:
        if _instance is None or _instance_pid != os.getpid():
            _instance = Sandbox(**_options)
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
