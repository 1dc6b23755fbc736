"""The host side: ``Sandbox.run`` sends each invocation through a warm zygote that forks a fresh child.

At start-up the sandbox probes the isolation tiers (see ``tiers.py``) strongest first and keeps the first
that starts and passes its self-test; below ``min_tier`` it refuses to run anything (SandboxUnavailable).
Each call in flight holds a slot (see ``slots.py``): its own uid when the platform runs as root, and a
scratch filesystem of bounded size (see ``scratch.py``).
"""

import atexit
import dataclasses
import functools
import importlib.util
import itertools
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

from . import tiers
from .bytecode import BytecodeCache
from .exceptions import RequestTooLarge, SandboxUnavailable
from .exchange import Spare, exchange
from .fairshare import TenantGate
from .invocation import Broker, Invocation, Outcome
from .limits import SandboxLimits
from .runtime import protocol
from .runtime.hardening import MAX_FILE_BYTES
from .scratch import ScratchArea
from .slots import NoFreeUids, Slot, SlotPool, UidClaim
from .verdicts import judge, queue_timeout, unavailable
from .workers import PoolLimits, Worker, WorkerPool
from .zygote_process import ZygoteLost, ZygoteProcess

logger = logging.getLogger("apps_runtime.sandbox")

# Where handlers' uids come from when the platform runs as root: one per call in flight, never shared by
# two calls at once on this host. 0x70000000-0x7000FFFF lies in a range systemd's uid plan leaves unused
# (above container ranges, below the foreign-image range); the range must own no file and run no process.
DEFAULT_UID_RANGE = (1879048192, 1879113727)
_MIB = 1024 * 1024
_BYTECODE_MAGIC = importlib.util.MAGIC_NUMBER.hex()


@functools.lru_cache(maxsize=1024)
def _real_path(bundle_dir: str) -> str:
    # A bundle dir is the platform's, unpacked once and read-only (one per app version): its real
    # path never changes, and resolving it cost ~7 lstat calls on every call.
    return os.path.realpath(bundle_dir)


@functools.lru_cache(maxsize=64)
def _limits_dict(limits: SandboxLimits) -> dict:
    return dataclasses.asdict(limits)


def _as_dict(limits: SandboxLimits) -> dict:
    """The limits as the call's config carries them (a copy: the cached one stays as it is)."""
    return dict(_limits_dict(limits))


def default_per_tenant(cpus: int | None = None) -> int:
    """Runs in flight per tenant when not configured: twice the host's cores, at least 4, so a tenant's
    share grows with the machine instead of staying at a fixed 4.
    """
    return max(4, 2 * (cpus if cpus is not None else os.cpu_count() or 1))


def _empty_dir(path: str, empty_size: int | None = None) -> None:
    """Remove what a warm worker's call left in its scratch dir, keeping the dir itself (the worker's
    confinement names it). ``empty_size``: the dir's size when empty, on a tmpfs, whose directory size counts
    its entries exactly (a fixed size per link, added and taken off by the kernel, which no handler can set):
    the same size again means nothing to remove, found with one stat instead of listing the dir.
    """
    if empty_size is not None:
        try:
            found = os.stat(path, follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISDIR(found.st_mode) and found.st_size == empty_size:
            return
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass  # the worker is retired if anything is left (see _finish_warm)


def _empty_size(slot: Slot, call_dir: str) -> int | None:
    """The size of ``call_dir``, new and empty, when its slot is a tmpfs (see ``_empty_dir``)."""
    if not slot.tmpfs:
        return None
    try:
        return os.stat(call_dir, follow_symlinks=False).st_size
    except OSError:
        return None


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
        max_concurrent_per_tenant: int | None = None,
        queue_timeout_ms: int = 5000,
        bwrap: str = "bwrap",
        max_concurrent: int = 64,
        scratch_mb: int = 64,
        uid_range: tuple[int, int] = DEFAULT_UID_RANGE,
        prefork: int = 8,
        warm_workers: int | None = None,
        warm_workers_per_tenant: int | None = None,
        warm_max_calls: int = 1000,
        warm_idle_s: float = 300.0,
        warm_max_growth_mb: int = 64,
        warm_tenant_memory_mb: int = 512,
    ):
        """Prepare a sandbox; the tier probe and the zygote start on ``start()`` or the first call.

        ``scratch_root`` (default: the system temp dir) is where the sandbox makes its private scratch dir,
        removed by ``close()`` (or, after a crash, by the next sandbox started there): each call works in a
        fresh dir of at most ``scratch_mb`` MiB in total, removed afterwards. ``max_concurrent`` calls run
        at once; more wait, like a full fair share. When the platform runs as root each of those calls has
        a uid of its own, from ``uid_range`` (first, last). ``bundle_root`` is the directory every
        ``Invocation.bundle_dir`` lies in (mounted read-only at tier 1, which needs it); calls for bundles
        elsewhere are refused. ``min_tier`` is the weakest isolation tier accepted (1 strongest ... 3), by
        number or name; ``tier`` forces one tier instead of probing (tests, benchmarks; "unconfined", tier 4,
        is accepted only with ``min_tier`` 4). ``max_concurrent_per_tenant`` bounds the runs in flight per
        ``Invocation.tenant_key``; a run waiting longer than ``queue_timeout_ms`` for a slot fails with
        HandlerFailed("sandbox_unavailable"). ``prefork`` call slots (handed out first) each keep a child
        forked and partly confined ahead of its next call, so fork and seccomp leave the call's path; the
        others (calls beyond ``prefork`` at once), and all with ``prefork=0``, fork the child when the call
        comes (the bare fork-per-call the benchmark compares with). ``max_concurrent_per_tenant`` defaults to
        twice the host's cores, at least 4.

        Calls with an ``Invocation.warm_key`` run in *warm workers* (see ``workers.py``): at most
        ``warm_workers`` per sandbox (default: half of ``max_concurrent``; 0 turns them off) and
        ``warm_workers_per_tenant`` per tenant (default: a quarter of ``warm_workers``, at least 1), each
        recycled after ``warm_max_calls`` calls, ``warm_idle_s`` seconds idle, ``warm_max_growth_mb`` MiB
        of memory growth, when it keeps a file, pipe or socket its call opened, when its tenant's workers
        hold more than ``warm_tenant_memory_mb`` MiB in all, and after any failure. A call that finds no
        idle worker of its key and no room for a new one runs in a fresh child.

        Raises:
            ValueError: an unknown tier, a non-positive limit, or an empty uid range.
        """
        self._python = python
        self._min_level = tiers.parse_tier(min_tier)
        self._forced_level = tiers.parse_tier(tier) if tier is not None else None
        if type(queue_timeout_ms) is not int or queue_timeout_ms < 0:
            raise ValueError(f"queue_timeout_ms must be a non-negative int, got {queue_timeout_ms!r}")
        if max_concurrent_per_tenant is None:
            max_concurrent_per_tenant = default_per_tenant()
        self._gate = TenantGate(max_concurrent_per_tenant)
        self._queue_timeout_s = queue_timeout_ms / 1000
        for name, value in (("max_concurrent", max_concurrent), ("scratch_mb", scratch_mb)):
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        first, last = uid_range
        if not (type(first) is int and type(last) is int and 0 < first <= last < 2**32 - 1):
            raise ValueError(f"uid_range must be (first, last) with 0 < first <= last, got {uid_range!r}")
        self._bwrap = bwrap
        if type(prefork) not in (int, bool) or prefork < 0:
            raise ValueError(f"prefork must be a non-negative int, got {prefork!r}")
        self._prefork = int(prefork)
        if warm_workers is None:
            warm_workers = max_concurrent // 2
        if type(warm_workers) is not int or not 0 <= warm_workers < max_concurrent:
            raise ValueError(
                f"warm_workers must be an int from 0 to max_concurrent - 1, got {warm_workers!r}"
            )
        self._workers = (
            WorkerPool(
                PoolLimits(
                    max_workers=warm_workers,
                    max_workers_per_tenant=warm_workers_per_tenant or max(1, warm_workers // 4),
                    max_calls=warm_max_calls,
                    idle_s=warm_idle_s,
                    max_growth_mb=warm_max_growth_mb,
                    max_tenant_memory_mb=warm_tenant_memory_mb,
                )
            )
            if warm_workers
            else None
        )
        self._all_slots: list[Slot] = []
        self._bytecode = BytecodeCache()
        self._uid_range = (first, last)
        self._max_concurrent = max_concurrent
        self._scratch_bytes = scratch_mb * _MIB
        self._drops_uid = os.geteuid() == 0
        self._bundle_root = os.path.realpath(bundle_root) if bundle_root is not None else None
        self._scratch_parent = os.path.realpath(scratch_root or tempfile.gettempdir())
        self._scratch: ScratchArea | None = None
        self._uids: UidClaim | None = None
        self._slots: SlotPool | None = None
        self._probe_uid: list[int] | None = None
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

    @property
    def max_concurrent(self) -> int:
        """Calls in flight at once (call slots)."""
        return self._max_concurrent

    def pool_usage(self) -> tuple[int, int, int]:
        """Call slots ``(in use, waited for, all)``; zeros before the first call prepared them."""
        pool = self._slots
        return (pool.in_use, pool.waiting, pool.size) if pool is not None else (0, 0, 0)

    @property
    def uid_range(self) -> tuple[int, int]:
        """(first, last) uids the handlers run as, when the platform runs as root."""
        return self._uid_range

    @property
    def scratch_mb(self) -> int:
        """Scratch space per call, in MiB (a bound in total only where ``scratch_bytes_per_call`` says)."""
        return self._scratch_bytes // _MIB

    @property
    def scratch_bytes_per_call(self) -> int | None:
        """What one call may write in total in its scratch dir (after ``start()``); None when only the
        per-file limit holds here (the platform cannot mount a tmpfs per call slot).
        """
        area = self._scratch
        return self._scratch_bytes if area is not None and area.unbounded_reason is None else None

    @property
    def scratch_dir(self) -> str | None:
        """This sandbox's private scratch dir (after ``start()``), for operations and tests."""
        return self._scratch.root if self._scratch is not None else None

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

    def _prepare_slots(self) -> None:
        """The scratch area, the uids (as root) and the call slots; once, before the first zygote."""
        try:
            area = ScratchArea(self._scratch_parent)
        except OSError as exc:
            raise SandboxUnavailable(
                f"Handler sandbox: cannot make its scratch dir in {self._scratch_parent!r}: {exc}"
            ) from None
        try:
            ids: list[tuple[int | None, int | None]] = [(None, None)] * self._max_concurrent
            if self._drops_uid:
                # One more than the slots: the zygote's start-up probe runs as that one.
                self._uids = UidClaim(*self._uid_range, self._max_concurrent + 1)
                *ids, probe = [(uid, uid) for uid in self._uids.uids]
                self._probe_uid = list(probe)
            slots = []
            for index, (uid, gid) in enumerate(ids):
                path = area.make_slot(str(index), self._scratch_bytes, uid, gid)
                slots.append(Slot(uid, gid, path, tmpfs=area.bounded(path)))
        except (NoFreeUids, OSError) as exc:
            area.close()
            if self._uids is not None:
                self._uids.close()
            raise SandboxUnavailable(f"Handler sandbox: cannot prepare its call slots: {exc}") from None
        self._scratch, self._slots, self._all_slots = area, SlotPool(slots, hot=self._prefork), slots

    def _probe(self) -> None:
        if self._slots is None:
            self._prepare_slots()
        if self._forced_level is not None:
            if self._forced_level > self._min_level:
                raise SandboxUnavailable(
                    f"Handler sandbox: forced {tiers.tier_label(self._forced_level)} is weaker than the "
                    f"minimum allowed, {tiers.tier_label(self._min_level)}"
                )
            candidates = [self._forced_level]
        else:  # strongest first; nothing weaker than the minimum is even tried
            candidates = [
                level
                for level in (tiers.NAMESPACES, tiers.LANDLOCK_SECCOMP, tiers.RLIMITS)
                if level <= self._min_level
            ]
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
            f"{tiers.tier_label(self._min_level)} works on this host ({details})",
            self._report,
        )

    def _log_tier(self) -> None:
        level = self._spec.level
        others = "; ".join(f"{label}: {reason}" for label, reason in self._report.items() if reason != "ok")
        how = "forced" if self._forced_level is not None else "probed"
        if level == tiers.NAMESPACES:
            logger.info(
                "Handler sandbox: isolation %s (%s), zygote pid %s",
                tiers.tier_label(level),
                how,
                self._zygote.pid,
            )
        elif level == tiers.RLIMITS:
            logger.warning(TIER_3_WARNING, how, f"; unavailable here: {others}" if others else "")
        else:
            logger.warning(
                "Handler sandbox: isolation %s (%s), below tier 1 (namespaces)%s",
                tiers.tier_label(level),
                how,
                f"; unavailable here: {others}" if others else "",
            )
        if self._scratch.unbounded_reason is not None:
            logger.warning(
                "Handler sandbox: a call's scratch space is bounded per file only (%d MiB), not in total: %s",
                MAX_FILE_BYTES // _MIB,
                self._scratch.unbounded_reason,
            )
        if not self._drops_uid and level < tiers.UNCONFINED:
            logger.warning(
                "Handler sandbox: the platform does not run as root, so calls share its uid: no "
                "per-call thread cap below tier 3, and concurrent calls are one user"
            )

    def _launch_spec(self, level: int) -> tiers.LaunchSpec:
        return tiers.launch_spec(
            level,
            python=self._python,
            bwrap=self._bwrap,
            bundle_root=self._bundle_root,
            scratch_dir=self._scratch.calls,
            probe_uid=self._probe_uid,
        )

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
        payload = protocol.encode_request(invocation.request)
        if len(payload) > limits.max_request_bytes:
            raise RequestTooLarge(len(payload), limits.max_request_bytes)
        key = invocation.tenant_key
        deadline = time.monotonic() + self._queue_timeout_s
        waited = f"{self._queue_timeout_s * 1000:.0f} ms"
        if key is not None and not self._gate.enter(key, self._queue_timeout_s):
            raise queue_timeout(
                invocation,
                f"tenant {key!r} already has {self._gate.limit} handler runs in "
                f"flight; waited {waited} for a slot",
            )
        try:
            try:
                self.start()
            except SandboxUnavailable as exc:
                raise unavailable(invocation, str(exc)) from None
            if invocation.warm_key is not None and self._workers is not None:
                outcome = self._run_warm(invocation, bundle_dir, payload, broker)
                if outcome is not None:
                    return outcome
            elif self._workers is not None:
                self._workers.count_call(warm=False)
            slot = self._acquire_slot(deadline)
            if slot is None:
                raise queue_timeout(
                    invocation,
                    f"all {self._slots.size} call slots of the sandbox are in use; waited {waited} for one",
                )
            try:
                return self._run(invocation, bundle_dir, payload, broker, slot)
            finally:
                self._slots.release(slot)
        finally:
            if key is not None:
                self._gate.leave(key)

    def _acquire_slot(self, deadline: float) -> Slot | None:
        """A free call slot, waiting until ``deadline`` at most. A call never waits for a slot an idle warm
        worker holds: when none is free at once, the least recently used idle worker gives its slot up.
        """
        slot = self._slots.acquire(0)
        if slot is None and self._workers is not None:
            victim = self._workers.least_recently_used()
            if victim is not None:
                self._retire(victim, "evicted")
        return slot or self._slots.acquire(deadline - time.monotonic())

    def _check_bundle_dir(self, bundle_dir: str) -> str:
        if not os.path.isabs(bundle_dir):
            raise ValueError(f"bundle_dir must be an absolute path, got {bundle_dir!r}")
        if self._bundle_root is None:
            return os.path.normpath(bundle_dir)
        real = _real_path(bundle_dir)
        if not real.startswith(self._bundle_root + os.sep):
            raise ValueError(f"bundle_dir {bundle_dir!r} is not inside the bundle root {self._bundle_root!r}")
        return real

    def _run(
        self, invocation: Invocation, bundle_dir: str, payload: bytes, broker: Broker, slot: Slot
    ) -> Outcome:
        limits = invocation.limits
        confined = self._confined
        scratch_dir = slot.new_call_dir(owned=confined)
        limits_dict = _as_dict(limits)
        try:
            transcript = None
            for attempt in range(2):
                zygote = self._current_zygote()
                if zygote is None:
                    break
                try:
                    spare = self._take_spare(slot, zygote)
                except ZygoteLost:
                    transcript = None
                    self._discard(zygote)
                    if attempt == 1:
                        break
                    continue  # found dead before it forked: no handler code ran
                code = self._handler_code(zygote, bundle_dir, invocation.handler)
                config = protocol.CallConfig(
                    bundle_dir, invocation.handler, scratch_dir, limits_dict, code=code is not None
                )
                transcript = exchange(spare, config, payload, limits, broker, code)
                if not (transcript.zygote_lost or transcript.zygote_hung):
                    break
                self._discard(zygote)
                # Retry only a zygote found dead before it forked: no handler code ran and no time was spent.
                if transcript.zygote_hung or transcript.forked or attempt == 1:
                    break
        finally:
            slot.clear(scratch_dir)
            self._refill(slot)
        if transcript is None:
            raise unavailable(invocation, "the zygote cannot be started")
        return judge(invocation, transcript)

    # -- warm workers ---------------------------------------------------------------------------------------
    def _run_warm(
        self, invocation: Invocation, bundle_dir: str, payload: bytes, broker: Broker
    ) -> Outcome | None:
        """Run the call in a warm worker of its key; None when no worker can take it (the caller then runs
        it in a fresh child).
        """
        pool = self._workers
        for worker in pool.expired(time.monotonic()):
            self._retire(worker, "idle")
        key = (invocation.warm_key, bundle_dir, invocation.limits)
        worker = pool.take(key)
        while worker is not None and not worker.spare.idle_clean():
            # It sent a frame after its last call ended (or died): never answered, never used again.
            self._retire(worker, "stray")
            worker = pool.take(key)
        if worker is None:
            worker = self._start_worker(key, invocation.tenant_key)
            if worker is None:
                pool.count_call(warm=False)
                return None
            if not worker.spare.take_pidfd():
                self._retire(worker, "failure")
                pool.count_call(warm=False)
                return None
        handler = invocation.handler
        reuse = handler in worker.loaded
        code = None if reuse else self._handler_code(worker.spare.zygote, bundle_dir, handler)
        if not reuse and code is None and worker.calls:
            # A handler the host cannot compile: its first call checks and reports it, in a fresh child.
            pool.put(worker)
            pool.count_call(warm=False)
            return None
        limits = invocation.limits
        # A handler the worker has loaded gets the same config every call: encoded once.
        config = worker.configs.get(handler) if reuse else None
        if config is None:
            limits_dict = _as_dict(limits)
            # RLIMIT_CPU counts the worker's whole life: room for every call it may serve, twice over
            # (threads).
            limits_dict["cpu_budget_ms"] = 2 * limits.timeout_ms * pool.limits.max_calls
            config = protocol.CallConfig(
                bundle_dir,
                handler,
                worker.scratch_dir,
                limits_dict,
                code=code is not None,
                worker=True,
                reuse=reuse,
            ).encode()
            if reuse:
                worker.configs[handler] = config
        pool.count_call(warm=True)
        try:
            transcript = exchange(worker.spare, config, payload, limits, broker, code, keep=True)
        except BaseException:
            self._retire(worker, "failure")  # the broker's own fault: the child was killed
            raise
        worker.calls += 1
        self._finish_warm(worker, transcript, handler)
        if transcript.zygote_lost or transcript.zygote_hung:
            self._discard(worker.spare.zygote)
        return judge(invocation, transcript)

    def _finish_warm(self, worker: Worker, transcript, handler: str) -> None:
        """Keep a worker that answered cleanly for its next call, or retire it and say why."""
        if not transcript.kept:
            self._retire(worker, "stray" if transcript.stray else "failure")
            return
        worker.loaded.add(handler)  # its next calls reuse the module (and a config encoded once)
        _empty_dir(worker.scratch_dir, worker.empty_size)
        reason = self._why_retire(worker)
        if reason is None:
            self._workers.put(worker)
        else:
            self._retire(worker, reason)

    def _why_retire(self, worker: Worker) -> str | None:
        """Why a worker whose call just ended must go (None: it may serve the next call). What it holds is
        measured by the host, never taken from the worker's word.
        """
        limits = self._workers.limits
        if worker.doomed:
            return worker.doomed
        if worker.spare.threads() != 1:
            # A thread the call left running would outlive the call's time limit (and could act in the
            # next one): the worker goes, and the thread with it.
            return "threads"
        if self._holds_what_its_call_made(worker):
            return "held"
        rss = worker.spare.resident_kb()
        if rss is None:
            return "memory"
        if worker.base_rss_kb is None:
            worker.base_rss_kb = rss
        worker.held_kb = rss
        if rss - worker.base_rss_kb > limits.max_growth_mb * 1024:
            return "memory"
        if self._workers.tenant_held_kb(worker.tenant) > limits.max_tenant_memory_mb * 1024:
            return "tenant_memory"
        if worker.calls >= limits.max_calls:
            return "calls"
        return None

    def _holds_what_its_call_made(self, worker: Worker) -> bool:
        """Whether a worker keeps what a call created past the call: a file, pipe, socket or in-memory file
        (beyond the runtime's own fds), or space in its scratch filesystem (a file it removed but holds
        open). Their memory is no limit's of the process, and it would keep it between calls.
        """
        spare = worker.spare
        count = spare.fd_count()
        if count >= 0 and (count != worker.base_fds or not self._filtered):
            # Without the seccomp filter (tier 3) a call could swap a runtime fd for an in-memory file and
            # keep the count: every fd is looked at after every call there.
            held = spare.held_files()
            if held != 0:
                return True
            worker.base_fds = count
        if worker.slot.tmpfs:
            try:
                found = os.statvfs(worker.slot.root)
            except OSError:
                return True
            if found.f_blocks != found.f_bfree:
                return True
        return False

    def _start_worker(self, key: tuple, tenant: str | None) -> Worker | None:
        """A new worker for ``key`` on a free call slot, evicting idle workers to stay within the bounds;
        None when the bounds are taken by busy workers, no slot is free at once, or the zygote is lost.
        """
        pool = self._workers
        granted, victims = pool.reserve(tenant)
        for victim in victims:
            self._retire(victim, "evicted")
        if not granted:
            return None
        slot = self._slots.acquire(0)
        zygote = self._current_zygote() if slot is not None else None
        if zygote is None:
            pool.unreserve(tenant)
            if slot is not None:
                self._slots.release(slot)
            return None
        try:
            spare = self._take_spare(slot, zygote)
        except ZygoteLost:
            pool.unreserve(tenant)
            self._slots.release(slot)
            self._discard(zygote)
            return None
        scratch_dir = slot.new_call_dir(owned=self._confined)
        worker = Worker(key, tenant, slot, spare, scratch_dir, empty_size=_empty_size(slot, scratch_dir))
        pool.add(worker)
        return worker

    def _retire(self, worker: Worker, reason: str) -> None:
        """Kill ``worker``'s child, empty its scratch dir and give its call slot back."""
        self._workers.forget(worker, reason)
        spare, slot = worker.spare, worker.slot
        if spare.sock is not None:
            spare.zygote.kill_call(spare.call_id)
            spare.close()
        slot.clear(worker.scratch_dir)
        self._refill(slot)
        self._slots.release(slot)

    def drain_workers(self, prefix: str) -> int:
        """Retire the warm workers whose ``warm_key`` starts with ``prefix`` (an app's, on deploy or
        rollback): idle ones now, busy ones when their call ends. Returns how many were idle.
        """
        if self._workers is None:
            return 0
        idle = self._workers.drain(prefix)
        for worker in idle:
            self._retire(worker, "drained")
        return len(idle)

    def supersede_workers(self, prefix: str, current: str) -> int:
        """Retire the warm workers whose ``warm_key`` starts with ``prefix`` but is not ``current`` (an app's
        versions other than its active one, found superseded by a deploy made elsewhere): idle ones now,
        busy ones when their call ends. Returns how many were idle.
        """
        if self._workers is None:
            return 0
        idle = self._workers.supersede(prefix, current)
        for worker in idle:
            self._retire(worker, "superseded")
        return len(idle)

    def warm_keys(self) -> set[str]:
        """The ``warm_key`` of every warm worker (busy or idle), for the sweep for superseded versions."""
        if self._workers is None:
            return set()
        return {key[0] for key in self._workers.keys() if isinstance(key[0], str)}

    def pool_stats(self) -> dict:
        """The warm workers of this sandbox, for operators and metrics: ``workers`` (``idle``, ``busy``),
        ``tenants`` having one, the bounds, ``starts``, ``warm_calls`` (calls served by a worker),
        ``per_call_calls`` (in a fresh child), and ``recycles`` by reason (``calls``, ``idle``, ``memory``,
        ``threads``, ``failure``, ``stray``, ``evicted``, ``drained``, ``closed``). Idle workers past their
        idle time, and those that sent anything since their last call ended, are recycled first. All zeros
        when warm workers are off.
        """
        if self._workers is None:
            return WorkerPool(PoolLimits(1, 1, 1, 1, 1)).stats() | {
                "max_workers": 0,
                "max_workers_per_tenant": 0,
            }
        for worker in self._workers.expired(time.monotonic()):
            self._retire(worker, "idle")
        for worker in self._workers.claim_idle():
            if worker.spare.idle_clean():
                self._workers.put(worker, touch=False)
            else:
                self._retire(worker, "stray")
        return self._workers.stats()

    def _handler_code(self, zygote: ZygoteProcess, bundle_dir: str, handler: str) -> bytes | None:
        """The handler's code compiled once by this process, if the zygote's interpreter can load it."""
        if zygote.ready.bytecode != _BYTECODE_MAGIC:
            return None
        return self._bytecode.get(bundle_dir, handler)

    def _take_spare(self, slot: Slot, zygote: ZygoteProcess) -> Spare:
        """The slot's spare child if ``zygote`` made it, else a child forked now.

        Raises:
            ZygoteLost: the zygote is gone or not reading its control socket.
        """
        spare, slot.spare = slot.spare, None
        if spare is not None and spare.zygote is zygote:
            return spare
        if spare is not None:
            spare.close()  # a replaced zygote's (dead with it)
        return Spare(zygote, next(self._call_ids), slot.ids if self._confined else None, ahead=False)

    def _refill(self, slot: Slot) -> None:
        """Have the zygote fork the slot's next child now, off the next call's path. The zygote first reaps
        the child that just served the slot: no two processes of one call uid ever live at once.
        """
        if not slot.hot or slot.spare is not None:
            return
        with self._lock:
            zygote = self._zygote if not self._closed else None
        if zygote is None or zygote.owner_pid != os.getpid():
            return
        try:
            slot.spare = Spare(zygote, next(self._call_ids), slot.ids if self._confined else None)
        except ZygoteLost:
            pass  # the next call on this slot finds out and starts a new zygote

    @property
    def _filtered(self) -> bool:
        """Whether children run under the seccomp filter (tiers 1-2): no in-memory files, small pipes."""
        return self._spec.level <= tiers.LANDLOCK_SECCOMP

    @property
    def _confined(self) -> bool:
        return self._spec.level < tiers.UNCONFINED

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
        """Stop the zygote (and any child still running), remove the scratch dir, give the uids back."""
        with self._start_lock, self._lock:
            self._closed = True
            zygote, self._zygote = self._zygote, None
        if self._workers is not None:
            for worker in self._workers.claim_idle():
                self._workers.forget(worker, "closed")
                worker.spare.close()
        for slot in self._all_slots:
            spare, slot.spare = slot.spare, None
            if spare is not None:
                spare.close()
        if zygote is not None and zygote.owner_pid == os.getpid():
            zygote.close()
        if self._scratch is not None:
            self._scratch.close()  # a no-op in a process made by os.fork(): the parent's, not ours
        if self._uids is not None:
            self._uids.close()


TIER_3_WARNING = """Handler sandbox: isolation tier 3 (rlimits) (%s): HANDLERS ARE WEAKLY CONFINED.
    At tier 3 a handler can read every file its uid may read (/etc, world-readable source and packages),
    connect to TCP services on this host (databases, caches, this platform) and write outside its
    scratch dir. Use it only for trusted handlers; install bubblewrap (tier 1) or use a Landlock kernel
    (tier 2), and set SANDBOX_MIN_TIER to refuse to start below them%s"""

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


def pool_stats() -> dict:
    """The warm workers of this process's sandbox (``Sandbox.pool_stats``), for metrics and the admin; starts
    nothing.
    """
    return get_sandbox().pool_stats()


def get_sandbox() -> Sandbox:
    """The process-wide Sandbox, created on first use (and again in a process made by ``os.fork``)."""
    global _instance, _instance_pid
    with _instance_lock:
        if _instance is None or _instance_pid != os.getpid():
            _instance = Sandbox(**_options)
            _instance_pid = os.getpid()
        return _instance


def close_sandbox() -> None:
    """Close this process's sandbox (zygote, warm workers, scratch mounts and dir) on the way out; a later
    ``get_sandbox()`` builds a new one. For a server's shutdown: uvicorn ends a process stopped by SIGTERM
    by raising the signal again once its lifespan has ended, so no atexit hook runs then.
    """
    global _instance
    with _instance_lock:
        old, _instance = (_instance if _instance_pid == os.getpid() else None), None
    if old is not None:
        old.close()


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
