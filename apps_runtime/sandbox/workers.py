"""Warm workers: sandbox children that serve many calls of one app version, one call at a time.

A worker is a child forked by the zygote and confined once, for its first call, exactly as a per-call
child is (bundle, scratch dir, the slot's uid, limits); it then stays, waiting for the next call of the same
key: one tenant, one app version (``Invocation.warm_key``), the same bundle and the same limits. It is never
handed a call of another key. The handler's module, and so its globals, lives as long as the worker, as in
any web server or an AWS Lambda execution environment; nothing else is kept: the scratch dir is emptied
between calls, and the caller's identity lives host-side in the broker of the call in flight only.

This module keeps the books (which workers exist, which are idle, the bounds per host and per tenant, the
least recently used idle worker to evict, the counters operators read); the supervisor starts, runs and
retires the workers themselves.
"""

import collections
import threading
import time
from dataclasses import dataclass, field

from .exchange import Spare
from .slots import Slot

# Why a worker was retired (the keys of ``PoolStats.recycles``).
RECYCLE_REASONS = (
    "calls",
    "idle",
    "memory",
    "held",
    "tenant_memory",
    "threads",
    "failure",
    "stray",
    "evicted",
    "drained",
    "superseded",
    "closed",
)


@dataclass(eq=False)
class Worker:
    """One warm worker: its key, the call slot it holds for life (uid, scratch dir) and its child."""

    key: tuple
    tenant: str | None
    slot: Slot
    spare: Spare
    scratch_dir: str
    started: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    calls: int = 0
    base_rss_kb: int | None = None  # its resident memory after its first call, measured by the host
    base_fds: int | None = None  # the fds it holds after its first call (the runtime's own)
    held_kb: int = 0  # the memory it holds now, measured by the host after its last call
    loaded: set[str] = field(default_factory=set)  # handler paths its child has loaded
    configs: dict[str, bytes] = field(default_factory=dict)  # their call configs, encoded (reuse=True)
    doomed: str | None = None  # drained or superseded while busy: retired for that reason after its call
    empty_size: int | None = None  # its scratch dir's size when empty, on a tmpfs (see supervisor._empty_dir)


@dataclass(frozen=True)
class PoolLimits:
    """The bounds of a worker pool (see ``Sandbox(warm_workers=...)``)."""

    max_workers: int  # per sandbox (one server process); idle ones are evicted, least recently used first
    max_workers_per_tenant: int
    max_calls: int  # calls a worker serves before it is recycled
    idle_s: float  # a worker idle this long is recycled
    max_growth_mb: int  # memory growth over the worker's first call before it is recycled
    # What one tenant's workers may hold in all (this sandbox); a worker whose call takes its tenant over
    # is recycled when the call ends.
    max_tenant_memory_mb: int = 512

    def __post_init__(self) -> None:
        for name in (
            "max_workers",
            "max_workers_per_tenant",
            "max_calls",
            "max_growth_mb",
            "max_tenant_memory_mb",
        ):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(self.idle_s, int | float) or self.idle_s <= 0:
            raise ValueError(f"idle_s must be a positive number, got {self.idle_s!r}")


class WorkerPool:
    """The books of the warm workers of one sandbox. Thread-safe."""

    def __init__(self, limits: PoolLimits):
        self.limits = limits
        self._lock = threading.Lock()
        self._idle: collections.OrderedDict[Worker, None] = collections.OrderedDict()  # LRU first
        self._idle_by_key: dict[tuple, list[Worker]] = {}  # most recently used last
        self._all: set[Worker] = set()
        self._reserved: collections.Counter[str | None] = collections.Counter()  # starting, per tenant
        self._per_tenant: collections.Counter[str | None] = collections.Counter()
        self._starts = 0
        self._warm_calls = 0
        self._cold_calls = 0
        self._recycles = dict.fromkeys(RECYCLE_REASONS, 0)

    def take(self, key: tuple) -> Worker | None:
        """The most recently used idle worker of ``key`` (now busy), or None."""
        with self._lock:
            stack = self._idle_by_key.get(key)
            if not stack:
                return None
            worker = stack.pop()
            if not stack:
                del self._idle_by_key[key]
            del self._idle[worker]
            return worker

    def claim_idle(self) -> list[Worker]:
        """Every idle worker, now busy (to be checked, then put back or retired)."""
        with self._lock:
            idle = list(self._idle)
            for worker in idle:
                self._unidle(worker)
            return idle

    def reserve(self, tenant: str | None) -> tuple[bool, list[Worker]]:
        """Room for one more worker of ``tenant``: (granted, idle workers to retire first to make it).
        Idle workers go least recently used first, the tenant's own when the tenant is at its bound.
        Not granted when every worker that stands in the way is busy (the call then runs in a fresh child).
        """
        with self._lock:
            victims: list[Worker] = []
            if self._per_tenant[tenant] + self._reserved[tenant] >= self.limits.max_workers_per_tenant:
                victim = next((w for w in self._idle if w.tenant == tenant), None)
                if victim is None:
                    return False, []
                victims.append(victim)
            if len(self._all) - len(victims) + sum(self._reserved.values()) >= self.limits.max_workers:
                victim = next((w for w in self._idle if w not in victims), None)
                if victim is None:
                    return False, []
                victims.append(victim)
            for victim in victims:
                self._unidle(victim)
            self._reserved[tenant] += 1
            return True, victims

    def least_recently_used(self) -> Worker | None:
        """The idle worker used least recently, taken off the idle list (to be retired), or None."""
        with self._lock:
            victim = next(iter(self._idle), None)
            if victim is not None:
                self._unidle(victim)
            return victim

    def unreserve(self, tenant: str | None) -> None:
        with self._lock:
            self._reserved[tenant] -= 1

    def add(self, worker: Worker) -> None:
        """A started worker (busy with its first call), in place of its reservation."""
        with self._lock:
            self._reserved[worker.tenant] -= 1
            self._all.add(worker)
            self._per_tenant[worker.tenant] += 1
            self._starts += 1

    def put(self, worker: Worker, touch: bool = True) -> None:
        """A worker whose call ended cleanly waits for the next one (``touch``: it was just used)."""
        with self._lock:
            if touch:
                worker.last_used = time.monotonic()
            self._idle[worker] = None
            self._idle_by_key.setdefault(worker.key, []).append(worker)

    def _unidle(self, worker: Worker) -> None:
        del self._idle[worker]
        stack = self._idle_by_key[worker.key]
        stack.remove(worker)
        if not stack:
            del self._idle_by_key[worker.key]

    def forget(self, worker: Worker, reason: str) -> None:
        """``worker`` is being retired (busy, or taken off the idle list by this pool)."""
        with self._lock:
            if worker in self._idle:
                self._unidle(worker)
            if worker in self._all:
                self._all.discard(worker)
                self._per_tenant[worker.tenant] -= 1
                if not self._per_tenant[worker.tenant]:
                    del self._per_tenant[worker.tenant]
                self._recycles[reason] += 1

    def tenant_held_kb(self, tenant: str | None) -> int:
        """The memory ``tenant``'s workers hold, as last measured (each after its last call)."""
        with self._lock:
            return sum(w.held_kb for w in self._all if w.tenant == tenant)

    def keys(self) -> list[tuple]:
        """The keys of the workers in the pool (busy or idle)."""
        with self._lock:
            return list({w.key for w in self._all})

    def supersede(self, prefix: str, current: str) -> list[Worker]:
        """Workers whose ``warm_key`` starts with ``prefix`` but is not ``current`` (an app's other versions):
        the idle ones, taken off the idle list (to be retired now); the busy ones are marked to be retired
        when their call ends.
        """
        with self._lock:
            matching = [
                w
                for w in self._all
                if isinstance(w.key[0], str) and w.key[0].startswith(prefix) and w.key[0] != current
            ]
            return self._doom(matching, "superseded")

    def _doom(self, matching: list[Worker], reason: str) -> list[Worker]:
        idle = [w for w in matching if w in self._idle]
        for worker in idle:
            self._unidle(worker)
        for worker in matching:
            worker.doomed = worker.doomed or reason
        return idle

    def count_call(self, warm: bool) -> None:
        with self._lock:
            if warm:
                self._warm_calls += 1
            else:
                self._cold_calls += 1

    def expired(self, now: float) -> list[Worker]:
        """Idle workers unused for ``idle_s``, taken off the idle list (to be retired)."""
        with self._lock:
            old = [w for w in self._idle if now - w.last_used >= self.limits.idle_s]
            for worker in old:
                self._unidle(worker)
            return old

    def drain(self, prefix: str) -> list[Worker]:
        """Workers whose ``warm_key`` starts with ``prefix``: the idle ones, taken off the idle list (to be
        retired now); the busy ones are marked to be retired when their call ends.
        """
        with self._lock:
            matching = [w for w in self._all if isinstance(w.key[0], str) and w.key[0].startswith(prefix)]
            return self._doom(matching, "drained")

    def stats(self) -> dict:
        """Counts for operators: see ``Sandbox.pool_stats``."""
        with self._lock:
            return {
                "workers": len(self._all),
                "idle": len(self._idle),
                "busy": len(self._all) - len(self._idle),
                "tenants": len(self._per_tenant),
                "held_mb": sum(w.held_kb for w in self._all) // 1024,
                "max_workers": self.limits.max_workers,
                "max_workers_per_tenant": self.limits.max_workers_per_tenant,
                "starts": self._starts,
                "warm_calls": self._warm_calls,
                "per_call_calls": self._cold_calls,
                "recycles": dict(self._recycles),
            }
