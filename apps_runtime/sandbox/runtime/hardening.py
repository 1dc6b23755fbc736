"""Confinement a forked child applies to itself before any tenant code runs, by isolation tier.

Tiers (strongest first; each includes everything below it, except where noted):
  1 "namespaces"        the zygote runs inside bubblewrap (own mount/pid/net/ipc/uts namespaces, an empty
                        root with read-only system libraries, stdlib, runtime and bundles), holding only
                        CAP_SETUID/CAP_SETGID/CAP_KILL when launched by root. Set up by the host (see
                        ``tiers.py``); the child side is tier 2.
  2 "landlock-seccomp"  Landlock (read-only stdlib, system libraries, runtime and the call's bundle;
                        read-write scratch dir; nothing else; no TCP; signals scoped) and a seccomp deny-list
                        (no sockets, exec, new processes, SysV/POSIX-mq IPC, ptrace, namespaces,
                        io_uring...; threads work). With a uid of its own, RLIMIT_NPROC caps the call's
                        threads at ``max_threads`` (seccomp already refuses new processes).
  3 "rlimits"           resource limits (RLIMIT_NPROC=0 included: no process, no thread), an empty
                        environment, brokered data, not dumpable, and (when the zygote runs as root) an IPC
                        namespace of its own.
  4 "unconfined"        nothing at all: only for measuring what the other tiers cost.

At tiers 1-3, when the platform runs as root, each child drops to the uid of its call slot (one uid per
call in flight, see the host's ``slots.py``).

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

from . import landlock, protocol, seccomp

NAMESPACES, LANDLOCK_SECCOMP, RLIMITS, UNCONFINED = 1, 2, 3, 4
TIER_NAMES = {
    NAMESPACES: "namespaces",
    LANDLOCK_SECCOMP: "landlock-seccomp",
    RLIMITS: "rlimits",
    UNCONFINED: "unconfined",
}
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
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CLONE_NEWIPC = 0x08000000
IPC_PRIVATE = 0


class Unavailable(Exception):
    """This tier cannot be set up in this process (reported to the host, which tries a weaker tier)."""


class Confinement:
    """What every child of one zygote applies; built once by ``prepare``."""

    def __init__(
        self,
        tier: int,
        fd_paths: bool,
        keep_fds: list[int],
        ruleset: landlock.Ruleset | None,
        seccomp_filter: seccomp.Filter | None,
        ipc_namespace: bool = False,
    ):
        self.tier = tier
        self.ipc_namespace = ipc_namespace  # each child unshares one (tier 3 as root)
        self.fd_paths = fd_paths  # the bundle is reached through /proc/self/fd (see boot.py)
        self.keep_fds = keep_fds  # fds the handler keeps: the stdlib's O_PATH fds in fd_paths mode
        self.ruleset = ruleset
        self.seccomp = seccomp_filter
        self.spare_prepared = False  # set in a child by prepare_spare: harden skips what it did
        self.ruleset_fd: int | None = None  # a spare's Landlock ruleset with the fixed rules, built ahead
        self._libc = ctypes.CDLL(None, use_errno=True) if tier < UNCONFINED else None
        if self._libc is not None:
            # Looked up once here: a first lookup in each child would make the function object there.
            self._libc.prctl, self._libc.unshare  # noqa: B018

    @property
    def name(self) -> str:
        return TIER_NAMES[self.tier]

    def prctl(self, option: int, value: int) -> None:
        if self._libc.prctl(option, value, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"prctl({option}): {os.strerror(code)}")

    def unshare(self, flags: int) -> None:
        if self._libc.unshare(flags) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"unshare({flags:#x}): {os.strerror(code)}")


_confinement: Confinement | None = None


def _stdlib_dirs() -> list[str]:
    # sys.path holds /proc/self/fd/N aliases in fd_paths mode: Landlock wants the real directories.
    return [os.path.realpath(p) for p in sys.path if os.path.exists(p)]


def prepare(config: protocol.LaunchConfig) -> Confinement:
    """Zygote-time setup for ``config.tier``. Irreversible choices are made only in the children.

    Raises:
        Unavailable: a mechanism the tier needs is missing (no Landlock, not x86_64, ...).
    """
    global _confinement
    tier = config.tier
    if tier not in TIER_NAMES:
        raise Unavailable(f"unknown tier {tier}")
    ruleset = filter_ = None
    if tier <= LANDLOCK_SECCOMP:
        filter_ = seccomp.Filter.build()
        if filter_ is None:
            raise Unavailable(f"seccomp filter is only built for x86_64, this is {os.uname().machine}")
        read_only = [*_stdlib_dirs(), RUNTIME_DIR, *_library_dirs(), *_zoneinfo_dirs()]
        ruleset = landlock.Ruleset.prepare(read_only, DEVICE_FILES)
        if ruleset is None:
            raise Unavailable("Landlock is not available in this kernel (or is disabled)")
    stdlib_fds = sorted(config.stdlib_fds)
    _inherited_hard.update((which, resource.getrlimit(which)[1]) for which in _LIMITED)
    _confinement = Confinement(
        tier,
        config.fd_paths,
        stdlib_fds,
        ruleset,
        filter_,
        config.ipc_namespace and tier == RLIMITS,
    )
    if tier == NAMESPACES:
        _keep_capabilities_to_ourselves(_confinement._libc)
    return _confinement


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _keep_capabilities_to_ourselves(libc) -> None:
    """Empty the inheritable and ambient sets bubblewrap fills (the permitted set stays): a child's uid
    drop clears its permitted and ambient capabilities, not its inheritable ones.

    Raises:
        Unavailable: the kernel refused.
    """
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise Unavailable(f"capget: {os.strerror(ctypes.get_errno())}")
    for word in data:
        word.inheritable = 0
    if (
        libc.capset(ctypes.byref(header), data) != 0
        or libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0
    ):
        raise Unavailable(f"cannot clear inherited capabilities: {os.strerror(ctypes.get_errno())}")


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


# The zygote's hard limits, read once by prepare(): a child inherits them and only ever lowers each once, so
# it needs no getrlimit of its own.
_inherited_hard: dict[int, int] = {}
_LIMITED = (
    resource.RLIMIT_CPU,
    resource.RLIMIT_AS,
    resource.RLIMIT_NPROC,
    resource.RLIMIT_FSIZE,
    resource.RLIMIT_CORE,
    resource.RLIMIT_NOFILE,
)
# Read once (sysconf asks the kernel for RLIMIT_NOFILE): no fd of a child lies above the zygote's limit.
_OPEN_MAX = os.sysconf("SC_OPEN_MAX")


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    """Lower a limit; never try to raise a hard limit above the inherited one (needs privilege)."""
    hard = soft if hard is None else hard
    current_hard = _inherited_hard.get(which)
    if current_hard is None:
        _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def _set_rlimits(limits: dict, max_tasks: int | None, fixed_done: bool) -> None:
    # A warm worker's limit covers all the calls it may serve (``cpu_budget_ms``): RLIMIT_CPU counts the
    # process's whole life. Each call stays bounded by the zygote's wall-clock kill.
    cpu_seconds = math.ceil(limits.get("cpu_budget_ms", limits["timeout_ms"]) / 1000) + 1
    # Backstop for the zygote's wall-clock kill: SIGXCPU at the soft limit, SIGKILL one second later.
    _limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * _MIB)
    if max_tasks is not None:
        # Counts every task (thread or process) of the uid, and is not enforced for uid 0: meaningful only
        # with the drop to the call's own uid that follows.
        _limit(resource.RLIMIT_NPROC, max_tasks)
    # RLIMIT_NOFILE comes last, in harden(): the child still holds every fd of the zygote (two per call in
    # flight), so the fds it opens meanwhile may be numbered above the limit.
    if not fixed_done:  # else prepare_spare set them
        _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
        _limit(resource.RLIMIT_CORE, 0)


def prepare_spare(keep: list[int] = ()) -> None:
    """What a spare child applies to itself before its call is known: the limits no call changes, the IPC
    namespace (tier 3 as root), no new privileges and the seccomp filter; then it closes every fd the
    zygote held but the fixed ones (Landlock's path fds, the stdlib's in fd_paths mode). Irreversible; call
    once, right after the fork, before ``harden``. The seccomp filter leaves what ``harden`` does later
    (open, chdir, the uid drop, Landlock, lowering limits) allowed.
    """
    conf = _confinement or Confinement(RLIMITS, False, [], None, None)
    if conf.tier >= UNCONFINED:
        return
    _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    if conf.ipc_namespace:
        conf.unshare(CLONE_NEWIPC)  # needs CAP_SYS_ADMIN: before the drop
    conf.prctl(PR_SET_NO_NEW_PRIVS, 1)
    if conf.seccomp is not None:
        conf.seccomp.apply()
    fixed = conf.ruleset.fixed_fds if conf.ruleset is not None else []
    close_fds_above(4, [*conf.keep_fds, *fixed, *keep])
    if conf.ruleset is not None:
        # The fixed rules now, in a ruleset only this child holds; harden adds the call's dirs and restricts.
        conf.ruleset_fd = conf.ruleset.build()
    conf.spare_prepared = True


def harden(
    limits: dict, bundle_dir: str | None = None, scratch_dir: str | None = None, uid: list[int] | None = None
) -> tuple[str | None, list[int]]:
    """Apply this zygote's tier to the calling child and enter ``scratch_dir``. Irreversible; call once,
    right after the fork.

    ``limits`` holds the fields of ``SandboxLimits`` (``timeout_ms``, ``memory_mb``, ``max_threads``...);
    ``uid`` is [uid, gid] of the call's slot, to drop to (None: stay who we are, the platform is not root).
    Returns the path under which the handler reaches ``bundle_dir`` (a ``/proc/self/fd`` alias in fd_paths
    mode) and the fds that must stay open for the handler; every other fd above 3 may be closed.
    """
    conf = _confinement or Confinement(RLIMITS, False, [], None, None)
    keep = list(conf.keep_fds)
    if conf.tier >= UNCONFINED:
        if scratch_dir is not None:
            os.chdir(scratch_dir)
        return bundle_dir, keep
    if conf.tier == RLIMITS:
        max_tasks = 0  # no seccomp filter to tell threads from processes: neither
    else:
        max_tasks = limits.get("max_threads") if uid is not None else None
    _set_rlimits(limits, max_tasks, conf.spare_prepared)
    if conf.ipc_namespace and not conf.spare_prepared:
        conf.unshare(CLONE_NEWIPC)  # needs CAP_SYS_ADMIN: before the drop

    bundle_fd = scratch_fd = None
    if bundle_dir is not None and (conf.fd_paths or conf.ruleset is not None):
        bundle_fd = os.open(bundle_dir, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    # Entered while privileged (tiers 2-3: the scratch root may lie below owner-only dirs), except at tier
    # 1, whose zygote, a root without CAP_DAC_*, may enter the call's 0700 dir only as its owner (below
    # mount points every uid can traverse).
    enter_first = conf.tier != NAMESPACES or uid is None
    if scratch_dir is not None and enter_first:
        os.chdir(scratch_dir)
    if uid is not None:
        _drop_to(conf, *uid)
    if scratch_dir is not None and not enter_first:
        os.chdir(scratch_dir)
    if scratch_dir is not None and conf.ruleset is not None:
        scratch_fd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    conf.prctl(PR_SET_NO_NEW_PRIVS, 1)
    if conf.ruleset is not None:
        ruleset_fd, conf.ruleset_fd = conf.ruleset_fd, None
        conf.ruleset.apply(
            [bundle_fd] if bundle_fd is not None else [],
            [scratch_fd] if scratch_fd is not None else [],
            ruleset_fd,
        )
        for fd in conf.ruleset.fixed_fds:
            os.close(fd)
    if scratch_fd is not None:
        os.close(scratch_fd)
    # Not dumpable: no other process of the same uid may ptrace us or read /proc/<pid>/mem|environ.
    conf.prctl(PR_SET_DUMPABLE, 0)
    if conf.seccomp is not None and not conf.spare_prepared:
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


def _drop_to(conf: Confinement, uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    # A change of credentials clears the parent-death signal: arm it again.
    parent = os.getppid()
    conf.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(70)


def close_fds_above(lowest: int, keep: list[int]) -> None:
    """Close every fd >= ``lowest`` except those in ``keep``."""
    start = lowest
    for fd in sorted(f for f in keep if f >= lowest):
        if fd > start:  # kept fds are mostly consecutive: no empty range (a failing close_range each)
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, _OPEN_MAX)


# -- self-test ----------------------------------------------------------------------------------------------


def _probe(conf: Confinement, uid: list[int] | None, keep: list[int]) -> list[str]:
    """In a throwaway child: harden (as ``uid``, if given), then check that the tier's blocks hold.
    Returns the problems.
    """
    problems = []
    prepare_spare(keep)
    harden({"timeout_ms": 2000, "memory_mb": 256, "max_threads": 2}, uid=uid)
    if uid is not None and (os.getuid(), os.getgid()) != tuple(uid):
        problems.append(f"runs as uid {os.getuid()} gid {os.getgid()}, expected {uid}")
    # Tier 3 blocks fork with RLIMIT_NPROC=0, which the kernel does not enforce for uid 0.
    fork_blocked_by = errno.EPERM if conf.tier <= LANDLOCK_SECCOMP else errno.EAGAIN
    fork_must_fail = conf.tier <= LANDLOCK_SECCOMP or (conf.tier == RLIMITS and os.getuid() != 0)
    try:
        pid = os.fork()
    except OSError as exc:
        if fork_must_fail and exc.errno != fork_blocked_by:
            problems.append(
                f"fork failed with {errno.errorcode.get(exc.errno)}, "
                f"expected {errno.errorcode[fork_blocked_by]}"
            )
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        if fork_must_fail:
            problems.append("fork is not blocked")
    if conf.tier <= LANDLOCK_SECCOMP:
        try:  # refused before the path is even looked up
            os.execv("/nonexistent-sandbox-probe", ["probe"])
        except OSError as exc:
            if exc.errno != errno.EPERM:
                problems.append(f"exec failed with {errno.errorcode.get(exc.errno)}, expected EPERM")
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
        problems += _probe_threads(capped=uid is not None)
        if _libc_fails(conf, "shmget", IPC_PRIVATE, 4096, 0o600) != errno.EPERM:
            problems.append("SysV shared memory is not blocked")
    if conf.tier == NAMESPACES and os.path.exists("/etc/passwd"):
        problems.append("/etc/passwd is visible: not in a private mount namespace")
    return problems


def _probe_threads(capped: bool) -> list[str]:
    """One thread must start; with a uid of our own (max_threads 2: us and it), a second must not."""
    import threading  # here, in the probe child: see zygote.PRELOAD for why the zygote never imports it

    release = threading.Event()
    worker = threading.Thread(target=release.wait, args=(5,))
    try:
        worker.start()
    except RuntimeError:
        return ["threads do not work"]
    problems = []
    if capped:
        try:
            extra = threading.Thread(target=release.wait, args=(5,))
            extra.start()
            problems.append("RLIMIT_NPROC does not cap the call's threads")
        except RuntimeError:
            pass
    release.set()
    worker.join()
    return problems


def _libc_fails(conf: Confinement, name: str, *args: int) -> int:
    """The errno of a libc call that returns -1 on failure; 0 if it succeeded."""
    ctypes.set_errno(0)
    return ctypes.get_errno() if getattr(conf._libc, name)(*args) == -1 else 0


def self_test(probe_uid: list[int] | None, timeout_s: float = 5.0) -> dict:
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
            problems = _probe(conf, probe_uid, [result_w])
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
    return {
        "ok": not problems,
        "problems": problems,
        "landlock_abi": conf.ruleset.abi if conf.ruleset is not None else 0,
    }
