"""Confinement a forked child applies to itself before any tenant code runs, by isolation tier.

Tiers (strongest first; each includes everything below it, except where noted):
  1 "namespaces"        the zygote runs inside bubblewrap (own mount/pid/net/ipc/uts namespaces, an empty
                        root with read-only system libraries, stdlib, runtime and bundles), as an
                        unprivileged uid. Set up by the host (see ``tiers.py``); the child side is tier 2.
  2 "landlock-seccomp"  Landlock (read-only stdlib, system libraries, runtime and the call's bundle;
                        read-write scratch dir; nothing else; no TCP; signals scoped) and a seccomp deny-list
                        (no sockets, exec, new processes, ptrace, namespaces, io_uring...; threads work).
                        RLIMIT_NPROC is not lowered here: seccomp already refuses new processes, and an
                        NPROC of 0 would also refuse threads.
  3 "rlimits"           resource limits (RLIMIT_NPROC=0 included), an empty environment, brokered data, not
                        dumpable, and (when the zygote runs as root) a drop to the unprivileged sandbox uid.
  4 "unconfined"        nothing at all: only for measuring what the other tiers cost.

``prepare`` runs once in the zygote and does the expensive parts; ``harden`` runs in every child.
"""

import ctypes
import errno
import json
import math
import os
import resource
import select
import signal
import socket
import sys
import threading

from . import landlock, seccomp

NAMESPACES, LANDLOCK_SECCOMP, RLIMITS, UNCONFINED = 1, 2, 3, 4
TIER_NAMES = {NAMESPACES: "namespaces", LANDLOCK_SECCOMP: "landlock-seccomp", RLIMITS: "rlimits",
              UNCONFINED: "unconfined"}
TIER = "rlimits"  # the tier of a zygote started without a config (kept for callers of the old API)

MAX_OPEN_FILES = 64
MAX_FILE_BYTES = 16 * 1024 * 1024  # largest file a handler may write into its scratch dir
_MIB = 1024 * 1024
RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
# Shared libraries that extension modules load lazily (e.g. libsqlite3): the multiarch dirs (Debian) or the
# lib64 dirs (Fedora), plus the dirs of whatever is mapped already. Not /usr/lib itself: it holds
# dist-packages.
SYSTEM_LIBRARY_DIRS = ("/usr/lib64", "/lib64")
DEVICE_FILES = {
    "/dev/null": landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE,
    "/dev/zero": landlock.READ_FILE,
    "/dev/urandom": landlock.READ_FILE,
    "/dev/random": landlock.READ_FILE,
}
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38


class Unavailable(Exception):
    """This tier cannot be set up in this process (reported to the host, which tries a weaker tier)."""


class Confinement:
    """What every child of one zygote applies; built once by ``prepare``."""

    def __init__(self, tier: int, child_uid: tuple[int, int] | None, fd_paths: bool, keep_fds: list[int],
                 ruleset: landlock.Ruleset | None, seccomp_filter: seccomp.Filter | None):
        self.tier = tier
        self.child_uid = child_uid
        self.fd_paths = fd_paths  # the bundle is reached through /proc/self/fd (see boot.py)
        self.keep_fds = keep_fds  # fds the handler keeps: the stdlib's O_PATH fds in fd_paths mode
        self.ruleset = ruleset
        self.seccomp = seccomp_filter
        self._libc = ctypes.CDLL(None, use_errno=True) if tier < UNCONFINED else None

    @property
    def name(self) -> str:
        return TIER_NAMES[self.tier]

    def prctl(self, option: int, value: int) -> None:
        if self._libc.prctl(option, value, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"prctl({option}): {os.strerror(code)}")


_confinement: Confinement | None = None


def _stdlib_dirs() -> list[str]:
    # sys.path holds /proc/self/fd/N aliases in fd_paths mode: Landlock wants the real directories.
    return [os.path.realpath(p) for p in sys.path if os.path.exists(p)]


def prepare(config: dict) -> Confinement:
    """Zygote-time setup for ``config["tier"]`` (default: tier 3). Irreversible choices are made only in
    the children.

    Raises:
        Unavailable: a mechanism the tier needs is missing (no Landlock, not x86_64, ...).
    """
    global _confinement
    tier = int(config.get("tier", RLIMITS))
    if tier not in TIER_NAMES:
        raise Unavailable(f"unknown tier {tier}")
    child_uid = tuple(config["child_uid"]) if config.get("child_uid") else None
    ruleset = filter_ = None
    if tier <= LANDLOCK_SECCOMP:
        filter_ = seccomp.Filter.build()
        if filter_ is None:
            raise Unavailable(f"seccomp filter is only built for x86_64, this is {os.uname().machine}")
        read_only = [*_stdlib_dirs(), RUNTIME_DIR, *_library_dirs(), *_zoneinfo_dirs()]
        ruleset = landlock.Ruleset.prepare(read_only, DEVICE_FILES)
        if ruleset is None:
            raise Unavailable("Landlock is not available in this kernel (or is disabled)")
    stdlib_fds = sorted(config.get("stdlib_fds") or ())
    _confinement = Confinement(tier, child_uid, bool(config.get("fd_paths")), stdlib_fds, ruleset, filter_)
    return _confinement


def _library_dirs() -> list[str]:
    dirs = set(SYSTEM_LIBRARY_DIRS)
    arch = getattr(sys.implementation, "_multiarch", "")
    if arch:
        dirs.update((f"/usr/lib/{arch}", f"/lib/{arch}"))
    try:
        with open("/proc/self/maps") as maps:  # absent inside bubblewrap (no /proc): /usr is all there is
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip() if line.count(" ") >= 5 else ""
                if path.startswith("/") and ".so" in os.path.basename(path):
                    dirs.add(os.path.dirname(path))
    except OSError:
        pass
    stdlib = _stdlib_dirs()
    # The interpreter's own lib dir (libpython) is the parent of the stdlib and of its site-packages; what
    # is mapped from it needs no second look.
    return sorted(d for d in dirs if os.path.isdir(d) and not any(s.startswith(d + os.sep) for s in stdlib))


def _zoneinfo_dirs() -> list[str]:
    try:
        import zoneinfo
    except ImportError:
        return []
    return list(zoneinfo.TZPATH)


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    """Lower a limit; never try to raise a hard limit above the inherited one (needs privilege)."""
    hard = soft if hard is None else hard
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def _set_rlimits(limits: dict, nproc_zero: bool) -> None:
    cpu_seconds = math.ceil(limits["timeout_ms"] / 1000) + 1
    # Backstop for the zygote's wall-clock kill: SIGXCPU at the soft limit, SIGKILL one second later.
    _limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * _MIB)
    if nproc_zero:
        # Not enforced for uid 0: only meaningful with the drop to the sandbox uid that follows (which must
        # come after it, so that the kernel also refuses exec: PF_NPROC_EXCEEDED).
        _limit(resource.RLIMIT_NPROC, 0)
    # RLIMIT_NOFILE comes last, in harden(): the child still holds every fd of the zygote (two per call in
    # flight), so the fds it opens meanwhile may be numbered above the limit.
    _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)


def harden(
    limits: dict, bundle_dir: str | None = None, scratch_dir: str | None = None
) -> tuple[str | None, list[int]]:
    """Apply this zygote's tier to the calling child. Irreversible; call once, right after the fork.

    ``limits`` holds the fields of ``SandboxLimits`` (``timeout_ms``, ``memory_mb``, ...). Returns the path
    under which the handler reaches ``bundle_dir`` (a ``/proc/self/fd`` alias in fd_paths mode) and the fds
    that must stay open for the handler; every other fd above 3 may be closed.
    """
    conf = _confinement or Confinement(RLIMITS, None, False, [], None, None)
    keep = list(conf.keep_fds)
    if conf.tier >= UNCONFINED:
        return bundle_dir, keep
    _set_rlimits(limits, nproc_zero=conf.tier == RLIMITS)

    bundle_fd = scratch_fd = None
    if bundle_dir is not None and (conf.fd_paths or conf.ruleset is not None):
        bundle_fd = os.open(bundle_dir, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    if scratch_dir is not None and conf.ruleset is not None:
        scratch_fd = os.open(scratch_dir, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    conf.prctl(PR_SET_NO_NEW_PRIVS, 1)
    if conf.ruleset is not None:
        conf.ruleset.apply([bundle_fd] if bundle_fd is not None else [],
                           [scratch_fd] if scratch_fd is not None else [])
        for fd in conf.ruleset.fixed_fds:
            os.close(fd)
    if scratch_fd is not None:
        os.close(scratch_fd)
    if conf.child_uid is not None:
        uid, gid = conf.child_uid
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        # A change of credentials clears the parent-death signal: arm it again.
        parent = os.getppid()
        conf.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:
            os._exit(70)
    # Not dumpable: no other process of the same uid may ptrace us or read /proc/<pid>/mem|environ.
    conf.prctl(PR_SET_DUMPABLE, 0)
    if conf.seccomp is not None:
        conf.seccomp.apply()
    _limit(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)

    path = bundle_dir
    if bundle_fd is not None:
        if conf.fd_paths:
            path = f"/proc/self/fd/{bundle_fd}"
            keep.append(bundle_fd)
        else:
            os.close(bundle_fd)
    return path, keep


def close_fds_above(lowest: int, keep: list[int]) -> None:
    """Close every fd >= ``lowest`` except those in ``keep``."""
    start = lowest
    for fd in sorted(f for f in keep if f >= lowest):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


# -- self-test ----------------------------------------------------------------------------------------------

def _probe(conf: Confinement, expected_uid: int | None) -> list[str]:
    """In a throwaway child: harden, then check that the tier's blocks hold. Returns the problems."""
    problems = []
    harden({"timeout_ms": 2000, "memory_mb": 256})
    if expected_uid is not None and os.getuid() != expected_uid:
        problems.append(f"runs as uid {os.getuid()}, expected {expected_uid}")
    # Tier 3 blocks fork with RLIMIT_NPROC=0, which the kernel does not enforce for uid 0.
    fork_blocked_by = errno.EPERM if conf.tier <= LANDLOCK_SECCOMP else errno.EAGAIN
    fork_must_fail = conf.tier <= LANDLOCK_SECCOMP or (conf.tier == RLIMITS and os.getuid() != 0)
    try:
        pid = os.fork()
    except OSError as exc:
        if fork_must_fail and exc.errno != fork_blocked_by:
            problems.append(f"fork failed with {errno.errorcode.get(exc.errno)}, "
                            f"expected {errno.errorcode[fork_blocked_by]}")
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        if fork_must_fail:
            problems.append("fork is not blocked")
    if conf.tier <= LANDLOCK_SECCOMP:
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
            problems.append("socket(AF_INET) is not blocked")
        except PermissionError:
            pass
        try:
            os.listdir("/")
            problems.append("Landlock does not restrict reading /")
        except PermissionError:
            pass
        seen = []
        worker = threading.Thread(target=seen.append, args=(1,))
        worker.start()
        worker.join()
        if seen != [1]:
            problems.append("threads do not work")
    if conf.tier == NAMESPACES and os.path.exists("/etc/passwd"):
        problems.append("/etc/passwd is visible: not in a private mount namespace")
    return problems


def self_test(expected_uid: int | None, timeout_s: float = 5.0) -> dict:
    """Fork a probe child that applies the tier and checks its blocks (run once, in the zygote)."""
    conf = _confinement
    if conf is None:
        return {"ok": False, "problems": ["not prepared"]}
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(result_r)
            problems = _probe(conf, expected_uid)
            os.write(result_w, json.dumps(problems).encode())
            code = 0
        except BaseException as exc:  # report anything: the host logs it as the reason the tier is unusable
            try:
                os.write(result_w, json.dumps([f"probe crashed: {exc!r}"]).encode())
            except OSError:
                pass
        finally:
            os._exit(code)
    os.close(result_w)
    data = b""
    poller = select.poll()
    poller.register(result_r, select.POLLIN)
    while poller.poll(timeout_s * 1000):
        chunk = os.read(result_r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(result_r)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    try:
        problems = json.loads(data) if data else ["the probe child reported nothing"]
    except ValueError:
        problems = ["the probe child sent garbage"]
    return {"ok": not problems, "problems": problems,
            "landlock_abi": conf.ruleset.abi if conf.ruleset is not None else 0}
