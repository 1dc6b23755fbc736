"""Confinement a forked child applies to itself before any tenant code runs.

Tier "rlimits" (this module): resource limits only; the environment is already empty and data access is
brokered. Stronger tiers (bubblewrap, seccomp, Landlock) extend ``harden`` and flip the expectations in
``tests/apps_runtime/sandbox/test_attacks.py``.

Known gap of this tier: the sandbox runs as the web process's uid. As root, RLIMIT_NPROC is not enforced
(fork and os.system work) and a handler may raise its own hard limits (CAP_SYS_RESOURCE); the hardening tier
runs the pool as a dedicated unprivileged uid.
"""

import math
import resource

TIER = "rlimits"

MAX_OPEN_FILES = 64
MAX_FILE_BYTES = 16 * 1024 * 1024  # largest file a handler may write into its scratch dir
_MIB = 1024 * 1024


def _limit(which: int, soft: int, hard: int | None = None) -> None:
    """Lower a limit; never try to raise a hard limit above the inherited one (needs privilege)."""
    hard = soft if hard is None else hard
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def harden(limits: dict) -> None:
    """Apply this tier's confinement to the calling process. Irreversible; call once, in the child.

    ``limits`` holds the fields of ``SandboxLimits`` (``timeout_ms``, ``memory_mb``, ...).
    """
    cpu_seconds = math.ceil(limits["timeout_ms"] / 1000) + 1
    # Backstop for the zygote's wall-clock kill: SIGXCPU at the soft limit, SIGKILL one second later.
    _limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * _MIB)
    _limit(resource.RLIMIT_NPROC, 0)
    _limit(resource.RLIMIT_NOFILE, MAX_OPEN_FILES)
    _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
