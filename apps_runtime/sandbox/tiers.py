"""Host side of the isolation tiers: names, what each needs of the host, and how a zygote is launched at it.

1 namespaces        bubblewrap (own mount, pid, net, ipc, uts namespaces; an empty root with read-only
                    /usr, the interpreter's stdlib, the sandbox runtime and the bundles root; the call
                    slots' scratch read-write; a private /tmp), plus tier 2 in every child. Launched by
                    root, the zygote keeps only CAP_SETUID/CAP_SETGID/CAP_KILL, to run each child as its
                    call's uid.
                    Needs the ``bwrap`` binary and, launched by root, CAP_SYS_ADMIN (not in a default
                    Docker container); launched by another user, unprivileged user namespaces.
2 landlock-seccomp  Landlock + seccomp in every child (see runtime/hardening.py), plus tier 3. Needs a
                    Landlock-enabled kernel (5.13+, ``lsm=...,landlock``) and x86_64. Works in Docker.
3 rlimits           resource limits, empty environment, brokered data, and (when the host runs as root)
                    a drop to the call's own uid and an IPC namespace per child. Needs nothing.
4 unconfined        a bare fork (no limits, no uid drop): for benchmarks only; never chosen by the probe.
"""

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field

from .runtime import landlock
from .runtime.hardening import LANDLOCK_SECCOMP, NAMESPACES, RLIMITS, TIER_NAMES, UNCONFINED
from .runtime.protocol import LaunchConfig

__all__ = [
    "LANDLOCK_SECCOMP",
    "NAMESPACES",
    "RLIMITS",
    "TIER_NAMES",
    "UNCONFINED",
    "LaunchSpec",
    "launch_spec",
    "parse_tier",
    "precheck",
    "tier_label",
]

RUNTIME_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")
BOOT_SCRIPT = os.path.join(RUNTIME_DIR, "boot.py")
TMP_SIZE_BYTES = 1024 * 1024  # the private /tmp of tier 1; children cannot write to it anyway (Landlock)
_TOP_LEVEL_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_INTERPRETER_SCRIPT = (
    "import json, os, site, sys\n"
    "print(json.dumps({'executable': os.path.realpath(sys.executable),\n"
    "                  'base_prefix': os.path.realpath(sys.base_prefix),\n"
    "                  'site': [p for p in site.getsitepackages([sys.base_prefix]) if os.path.isdir(p)]}))\n"
)


def parse_tier(value: int | str) -> int:
    """A tier number from a number or a name ("namespaces", "landlock-seccomp", "rlimits", "unconfined")."""
    if isinstance(value, bool):
        raise ValueError(f"not an isolation tier: {value!r}")
    if isinstance(value, int) and value in TIER_NAMES:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text.isdigit() and int(text) in TIER_NAMES:
            return int(text)
        for level, name in TIER_NAMES.items():
            if text == name:
                return level
    names = ", ".join(f"{level} ({name})" for level, name in TIER_NAMES.items())
    raise ValueError(f"not an isolation tier: {value!r}; expected one of {names}")


def tier_label(level: int) -> str:
    return f"tier {level} ({TIER_NAMES[level]})"


@dataclass(frozen=True)
class Interpreter:
    executable: str  # the real binary, run directly inside bubblewrap
    base_prefix: str
    site_dirs: tuple[str, ...]  # hidden inside bubblewrap


@functools.lru_cache(maxsize=8)
def _interpreter(python: str) -> Interpreter:
    result = subprocess.run(
        [python, "-I", "-S", "-c", _INTERPRETER_SCRIPT],
        env={},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    info = json.loads(result.stdout)
    return Interpreter(info["executable"], info["base_prefix"], tuple(info["site"]))


def interpreter(python: str) -> Interpreter:
    """Where ``python`` lives (asked once per interpreter).

    Raises:
        OSError, subprocess.SubprocessError, ValueError: it does not run.
    """
    return _interpreter(python)


def precheck(level: int, *, bwrap: str, bundle_root: str | None) -> str | None:
    """Why ``level`` cannot work on this host, found without starting anything; None if it may."""
    if level <= LANDLOCK_SECCOMP:
        if os.uname().machine != "x86_64":
            return f"the seccomp filter exists for x86_64 only, this host is {os.uname().machine}"
        if landlock.abi_version() < 1:
            return "the kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= list)"
    if level == NAMESPACES:
        if shutil.which(bwrap) is None:
            return f"bubblewrap is not installed ({bwrap!r} not found; Debian package 'bubblewrap')"
        if bundle_root is None:
            return "no bundle_root given (the bundles must be mounted into the namespace)"
        if not os.path.isdir(bundle_root):
            return f"bundle_root {bundle_root!r} is not a directory"
    return None


@dataclass
class LaunchSpec:
    """How to start a zygote at one tier."""

    level: int
    python: str
    config: LaunchConfig
    cwd: str
    expected_uid: int  # the zygote's uid as the host sees it (ours); checked against SCM_CREDENTIALS
    wrapper: list[str] = field(default_factory=list)  # bwrap ... "--" for tier 1

    def argv(self, ctrl_fd: int) -> list[str]:
        return [*self.wrapper, self.python, "-I", "-S", BOOT_SCRIPT, str(ctrl_fd), self.config.encode()]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _bwrap_argv(
    bwrap: str, interp: Interpreter, bundle_root: str, scratch_dir: str, as_root: bool
) -> list[str]:
    argv = [shutil.which(bwrap) or bwrap]
    if as_root:
        # No user namespace: the zygote stays root holding only CAP_SETUID/CAP_SETGID (no file, network or
        # admin power), so that each child can drop to its call's own uid: every handler is an
        # unprivileged uid on the host too, and no two calls in flight share one. CAP_KILL lets it kill
        # those children at their deadline; its PID namespace holds nothing else it could signal.
        argv += [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--cap-add",
            "CAP_KILL",
        ]
    else:
        argv += ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    # --as-pid-1: the zygote is the namespace's init, so bwrap (its parent) reaps it and the namespace ends
    # with it; from inside, signals its children send to pid 1 are ignored.
    argv += ["--as-pid-1", "--die-with-parent", "--new-session", "--clearenv"]
    bound = ["/usr"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for path in _TOP_LEVEL_LINKS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
            bound.append(path)
    argv += ["--dev", "/dev", "--size", str(TMP_SIZE_BYTES), "--tmpfs", "/tmp"]
    made = {"/", "/tmp", *bound}

    def mount(option: str, path: str) -> None:
        # bwrap would create missing parents 0700, which the sandbox uid could not traverse.
        parents = []
        parent = os.path.dirname(path)
        while parent not in made and parent != os.path.dirname(parent):
            parents.append(parent)
            parent = os.path.dirname(parent)
        for directory in reversed(parents):
            argv.extend(["--perms", "0755", "--dir", directory])
            made.add(directory)
        argv.extend([option, path, path])
        made.add(path)

    if not _under(interp.base_prefix, bound):
        mount("--ro-bind", interp.base_prefix)
        bound.append(interp.base_prefix)
    if not _under(interp.executable, bound):
        mount("--ro-bind", interp.executable)
    for site_dir in interp.site_dirs:  # installed packages are not the handlers' business
        if _under(site_dir, bound):
            argv.extend(["--tmpfs", site_dir, "--remount-ro", site_dir])
    mount("--ro-bind", RUNTIME_DIR)
    mount("--ro-bind", bundle_root)
    mount("--bind", scratch_dir)
    argv.extend(["--chdir", "/", "--"])
    return argv


def launch_spec(
    level: int,
    *,
    python: str,
    bwrap: str,
    bundle_root: str | None,
    scratch_dir: str,
    probe_uid: list[int] | None,
) -> LaunchSpec:
    """The launch of a zygote at ``level``; its children work in ``scratch_dir`` (the slots' parent) and
    its start-up probe runs as ``probe_uid`` ([uid, gid], when the platform runs as root).

    Raises:
        OSError, subprocess.SubprocessError, ValueError: ``python`` does not run (tier 1 asks it where it
        lives).
    """
    as_root = os.geteuid() == 0
    if level == NAMESPACES:
        interp = interpreter(python)
        wrapper = _bwrap_argv(bwrap, interp, bundle_root, scratch_dir, as_root)
        config = LaunchConfig(level, probe_uid)
        return LaunchSpec(level, interp.executable, config, "/", os.geteuid(), wrapper)
    if level in (LANDLOCK_SECCOMP, RLIMITS):
        # fd_paths: the children (the sandbox uid) may not be able to traverse to the stdlib or the bundle.
        # ipc_namespace: tier 3 has no seccomp filter to refuse SysV IPC and POSIX message queues, so each
        # child gets an IPC namespace of its own (root only: it needs CAP_SYS_ADMIN), gone when it exits.
        config = LaunchConfig(level, probe_uid, fd_paths=as_root, ipc_namespace=as_root and level == RLIMITS)
        return LaunchSpec(level, python, config, scratch_dir, os.geteuid())
    if level == UNCONFINED:
        return LaunchSpec(level, python, LaunchConfig(level), scratch_dir, os.geteuid())
    raise ValueError(f"unknown tier {level}")
