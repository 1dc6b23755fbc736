"""A seccomp deny-list filter, assembled by hand as classic BPF and loaded with raw syscalls (stdlib only).

Built once in the zygote (``Filter.build``); each child patches its own pid into the program and loads it
(``Filter.apply``). x86_64 only: on any other architecture ``Filter.build`` returns None and the tier that
needs it is unavailable. A syscall made with another ABI (i386 ``int 0x80``, x32) kills the process.

What the filter refuses (EPERM unless noted):
  * new processes: fork, vfork, clone without CLONE_THREAD or with any CLONE_NEW* flag, clone3 (ENOSYS,
    so glibc falls back to clone and threads still work), execve, execveat;
  * sockets: socket (every family), socketpair except AF_UNIX (asyncio's self-pipe needs it);
  * IPC that outlives the call or crosses calls: SysV shared memory, semaphores and message queues (shm*,
    sem*, msg*) and POSIX message queues (mq_*); a handler's threads share memory without them;
  * memory no limit counts: memfd_create and memfd_secret (in-memory files, whose pages RLIMIT_AS never
    sees: a warm worker could hold them between calls), and fcntl(F_SETPIPE_SZ) (a pipe keeps its
    default 64 KiB buffer) and setsockopt(SO_SNDBUF/SO_RCVBUF and their FORCE forms: a socket keeps the
    kernel's default buffer, ~208 KiB, where net.core.wmem_max may allow MiBs), so the 64 fds a handler may
    open hold at most ~13 MiB of kernel memory;
  * other processes: ptrace, process_vm_*, kcmp, pidfd_*, tkill, kill/tgkill/rt_*sigqueueinfo of any pid but
    our own, sched_set*/prlimit64/setpriority/ioprio_set aimed at another process, migrate/move_pages;
  * namespaces and mounts: unshare, setns, mount and the new mount API, pivot_root, chroot;
  * kernel attack surface: bpf, perf_event_open, userfaultfd, io_uring_*, keyctl/add_key/request_key,
    open_by_handle_at, modules, kexec, reboot, swap, clocks, quotas, fanotify, iopl/ioperm/modify_ldt...
"""

import ctypes
import errno
import os
import struct

SYS_SECCOMP = 317
SECCOMP_SET_MODE_FILTER = 1
PR_SET_NO_NEW_PRIVS = 38
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# classic BPF opcodes
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

# struct seccomp_data offsets (little-endian: the low 32 bits of an argument come first)
_NR = 0
_ARCH = 4


def _arg(index: int) -> int:
    return 16 + 8 * index


AF_UNIX = 1
CLONE_THREAD = 0x00010000
CLONE_NEW_ANY = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
F_SETPIPE_SZ = 1031
# setsockopt option names that size a socket's buffers (SOL_SOCKET; only AF_UNIX sockets exist here)
SO_BUFFER_SIZES = (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE

# x86_64 syscall numbers
SYS = {
    "shmget": 29,
    "shmat": 30,
    "shmctl": 31,
    "semget": 64,
    "semop": 65,
    "semctl": 66,
    "shmdt": 67,
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "semtimedop": 220,
    "mq_open": 240,
    "mq_unlink": 241,
    "mq_timedsend": 242,
    "mq_timedreceive": 243,
    "mq_notify": 244,
    "mq_getsetattr": 245,
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "kill": 62,
    "ptrace": 101,
    "syslog": 103,
    "rt_sigqueueinfo": 129,
    "uselib": 134,
    "setpriority": 141,
    "sched_setparam": 142,
    "sched_setscheduler": 144,
    "vhangup": 153,
    "modify_ldt": 154,
    "pivot_root": 155,
    "_sysctl": 156,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "nfsservctl": 180,
    "tkill": 200,
    "sched_setaffinity": 203,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "tgkill": 234,
    "mbind": 237,
    "set_mempolicy": 238,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "ioprio_set": 251,
    "migrate_pages": 256,
    "unshare": 272,
    "move_pages": 279,
    "rt_tgsigqueueinfo": 297,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "prlimit64": 302,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "sched_setattr": 314,
    "kexec_file_load": 320,
    "bpf": 321,
    "execveat": 322,
    "userfaultfd": 323,
    "pidfd_send_signal": 424,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_open": 434,
    "clone3": 435,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "mount_setattr": 442,
    "quotactl_fd": 443,
    "memfd_secret": 447,
    "process_mrelease": 448,
    "memfd_create": 319,
    "fcntl": 72,
    "setsockopt": 54,
}
DENIED = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "socket",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "tkill",
    "process_madvise",
    "process_mrelease",
    "migrate_pages",
    "move_pages",
    "ioprio_set",
    "mbind",
    "set_mempolicy",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "name_to_handle_at",
    "open_by_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "fanotify_init",
    "vhangup",
    "iopl",
    "ioperm",
    "modify_ldt",
    "uselib",
    "_sysctl",
    "nfsservctl",
    "sethostname",
    "setdomainname",
    "shmget",
    "shmat",
    "shmctl",
    "shmdt",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "memfd_create",
    "memfd_secret",
)
# Allowed only when the pid in argument 0 is 0 (the caller) or the caller's own pid.
SELF_ONLY = (
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "prlimit64",
)

_PID = "PID"  # placeholders patched per child
_NEG_PID = "NEG_PID"


class _Assembler:
    """Forward-jump-only BPF with symbolic labels."""

    def __init__(self):
        self.code: list[list] = []  # [op, jt, jf, k] where jt/jf may be labels and k may be a placeholder
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, op: int, k, jt=0, jf=0) -> None:
        self.code.append([op, jt, jf, k])

    def assemble(self) -> tuple[bytearray, list[tuple[int, str]]]:
        out = bytearray()
        patches = []
        for index, (op, jt, jf, k) in enumerate(self.code):
            jumps = []
            for target in (jt, jf):
                if isinstance(target, str):
                    offset = self.labels[target] - index - 1
                    if not 0 <= offset <= 255:
                        raise ValueError(f"BPF jump to {target} out of range ({offset})")
                    target = offset
                jumps.append(target)
            if isinstance(k, str):
                patches.append((len(out) + 4, k))
                k = 0
            out += struct.pack("=HBBI", op, jumps[0], jumps[1], k & 0xFFFFFFFF)
        return out, patches


_LEAF = 8  # syscall numbers compared one by one at the end of a search (8-12 attach fastest)


def _search(a: _Assembler, numbers: list[int], actions: dict[int, str]) -> None:
    """Jump to ``actions[nr]`` for the syscall number in the accumulator, or allow it: a binary search, so a
    syscall takes ~10 comparisons, not one per listed syscall. That matters when the filter is attached:
    the kernel then runs it for every syscall number, to find those it may allow without running it.
    """
    if len(numbers) <= _LEAF:
        for nr in numbers:
            a.emit(_JEQ, nr, actions[nr], 0)
        a.emit(_RET, RET_ALLOW)
        return
    middle = len(numbers) // 2
    upper = f"nr>={numbers[middle]}"
    a.emit(_JGE, numbers[middle], upper, 0)
    _search(a, numbers[:middle], actions)
    a.label(upper)
    _search(a, numbers[middle:], actions)


def _program() -> tuple[bytearray, list[tuple[int, str]]]:
    a = _Assembler()
    a.emit(_LD_ABS, _ARCH)
    a.emit(_JEQ, AUDIT_ARCH_X86_64, 0, "kill")
    a.emit(_LD_ABS, _NR)
    a.emit(_JGE, X32_SYSCALL_BIT, "deny", 0)
    actions = {SYS[name]: "deny" for name in DENIED}
    actions.update((SYS[name], "self_only") for name in SELF_ONLY)
    actions.update(
        {
            SYS["clone"]: "clone",
            SYS["clone3"]: "enosys",
            SYS["socketpair"]: "socketpair",
            SYS["kill"]: "kill_check",
            SYS["setpriority"]: "setpriority",
            SYS["fcntl"]: "fcntl",
            SYS["setsockopt"]: "setsockopt",
        }
    )
    _search(a, sorted(actions), actions)

    a.label("clone")
    a.emit(_LD_ABS, _arg(0))
    a.emit(_JSET, CLONE_NEW_ANY, "deny", 0)
    a.emit(_JSET, CLONE_THREAD, "allow", "deny")

    a.label("socketpair")
    a.emit(_LD_ABS, _arg(0))
    a.emit(_JEQ, AF_UNIX, "allow", "deny")

    a.label("kill_check")  # kill(pid): ourselves, our process group (0 or -pid; we lead it alone)
    a.emit(_LD_ABS, _arg(0))
    a.emit(_JEQ, _PID, "allow", 0)
    a.emit(_JEQ, 0, "allow", 0)
    a.emit(_JEQ, _NEG_PID, "allow", "deny")

    a.label("setpriority")  # setpriority(which, who, prio): only who == 0, the caller
    a.emit(_LD_ABS, _arg(1))
    a.emit(_JEQ, 0, "allow", "deny")

    a.label("fcntl")  # fcntl(fd, cmd, ...): every command but F_SETPIPE_SZ
    a.emit(_LD_ABS, _arg(1))
    a.emit(_JEQ, F_SETPIPE_SZ, "deny", "allow")

    a.label("setsockopt")  # setsockopt(fd, level, optname, ...): every option but a buffer's size
    a.emit(_LD_ABS, _arg(2))
    for optname in SO_BUFFER_SIZES:
        a.emit(_JEQ, optname, "deny", 0)
    a.emit(_RET, RET_ALLOW)

    a.label("self_only")
    a.emit(_LD_ABS, _arg(0))
    a.emit(_JEQ, 0, "allow", 0)
    a.emit(_JEQ, _PID, "allow", "deny")

    a.label("allow")
    a.emit(_RET, RET_ALLOW)
    a.label("deny")
    a.emit(_RET, RET_ERRNO | errno.EPERM)
    a.label("enosys")
    a.emit(_RET, RET_ERRNO | errno.ENOSYS)
    a.label("kill")
    a.emit(_RET, RET_KILL_PROCESS)
    return a.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """The prebuilt program; ``apply`` is the only per-child work."""

    def __init__(self, libc, template: bytearray, patches: list[tuple[int, str]]):
        self._libc = libc
        self._patches = patches
        self.instructions = len(template) // 8
        # The program and the ctypes arguments that point at it are made once, in the zygote: each child
        # patches its pid into its own (copy-on-write) copy of the program and makes the syscall.
        self._program = bytearray(template)
        self._buffer = (ctypes.c_char * len(self._program)).from_buffer(self._program)
        self._fprog = _SockFprog(self.instructions, ctypes.addressof(self._buffer))
        self._seccomp_args = (
            ctypes.c_long(SYS_SECCOMP),
            ctypes.c_long(SECCOMP_SET_MODE_FILTER),
            ctypes.c_long(0),
            ctypes.byref(self._fprog),
        )

    @classmethod
    def build(cls) -> "Filter | None":
        """The filter for this machine, or None when it cannot be used here (not x86_64, no ctypes)."""
        if os.uname().machine != "x86_64":
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return None
        libc.syscall.restype = ctypes.c_long
        libc.prctl.restype = ctypes.c_int
        template, patches = _program()
        return cls(libc, template, patches)

    def apply(self) -> None:
        """Load the filter into the calling process (and the threads it creates later). Irreversible.

        Raises:
            OSError: the kernel refused the filter (e.g. seccomp is not built in).
        """
        pid = os.getpid()
        values = {_PID: pid, _NEG_PID: -pid & 0xFFFFFFFF}
        for offset, name in self._patches:
            struct.pack_into("=I", self._program, offset, values[name])
        if self._libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _raise_errno("prctl(PR_SET_NO_NEW_PRIVS)")
        if self._libc.syscall(*self._seccomp_args) != 0:
            _raise_errno("seccomp(SECCOMP_SET_MODE_FILTER)")


def _raise_errno(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")
