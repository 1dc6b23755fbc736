"""Landlock with raw syscalls (444-446) through ctypes: filesystem allow-list, no TCP, scoped signals.

The zygote opens the fixed read-only paths once (``Ruleset.prepare``); each child builds its ruleset from
those fds plus the call's bundle and scratch dirs, and restricts itself (``Ruleset.apply``): about a dozen
syscalls. Everything not granted is refused with EACCES, whatever the file modes say.

By ABI version (the kernel reports the highest it supports; all rights it does not know are left out):
  1  filesystem access rights          4  TCP bind/connect (none granted: no TCP at all)
  2  REFER (cross-directory renames)   5  ioctl on devices
  3  TRUNCATE                          6  scopes: signals and abstract unix sockets stay inside the domain
Landlock also keeps a restricted process from ptracing (or reading /proc/<pid>/mem of) any process outside
its own domain; every child gets a domain of its own, so children cannot reach each other either.
"""

import ctypes
import fcntl
import os
import struct

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
_FS_LATEST = (1 << 16) - 1  # ABI 5 and later

READ_ONLY = READ_FILE | READ_DIR
READ_WRITE = (
    READ_FILE
    | READ_DIR
    | WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SYM
    | REFER
    | TRUNCATE
)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a file may hold


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The Landlock ABI of the running kernel; 0 when Landlock is missing or disabled."""
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(
        ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def _raise_errno(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


class Ruleset:
    """What the zygote prepares once: handled rights for this ABI and fds of the fixed paths."""

    def __init__(self, abi: int, fixed: list[tuple[int, int]]):
        self.abi = abi
        self._libc = _libc()
        self._fs = _FS_BY_ABI.get(abi, _FS_LATEST)
        net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
        scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
        attr = struct.pack("=QQQ", self._fs, net, scoped)
        self._attr = attr[: 8 if abi < 4 else 16 if abi < 6 else 24]
        self._fixed = fixed  # (O_PATH fd, access) for the whole life of the zygote

    @classmethod
    def prepare(cls, read_only: list[str], files: dict[str, int]) -> "Ruleset | None":
        """Open the fixed paths: ``read_only`` dirs and ``files`` (path -> rights). None without Landlock.

        Paths that do not exist are skipped.
        """
        abi = abi_version()
        if abi < 1:
            return None
        fixed = []
        for path in read_only:
            fd = _open_path(path)
            if fd is not None:
                fixed.append((fd, READ_ONLY))
        for path, rights in files.items():
            fd = _open_path(path)
            if fd is not None:
                fixed.append((fd, rights))
        return cls(abi, fixed)

    @property
    def fixed_fds(self) -> list[int]:
        return [fd for fd, _ in self._fixed]

    def _add(self, ruleset_fd: int, fd: int, access: int) -> None:
        access &= self._fs
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
        if (
            self._libc.syscall(
                ctypes.c_long(SYS_ADD_RULE),
                ctypes.c_long(ruleset_fd),
                ctypes.c_long(RULE_PATH_BENEATH),
                rule,
                ctypes.c_long(0),
            )
            != 0
        ):
            _raise_errno("landlock_add_rule")

    def build(self) -> int:
        """A new ruleset fd holding the fixed rules, for ``apply``: the dozen ``landlock_add_rule`` calls are
        made ahead of the call (by a spare child, in a ruleset private to it), off the call's path.

        Raises:
            OSError: the kernel refused.
        """
        attr = ctypes.create_string_buffer(self._attr, len(self._attr))
        ruleset_fd = self._libc.syscall(
            ctypes.c_long(SYS_CREATE_RULESET), attr, ctypes.c_size_t(len(self._attr)), ctypes.c_uint32(0)
        )
        if ruleset_fd < 0:
            _raise_errno("landlock_create_ruleset")
        try:
            for fd, access in self._fixed:
                self._add(ruleset_fd, fd, access)
        except BaseException:
            os.close(ruleset_fd)
            raise
        return ruleset_fd

    def apply(
        self, read_only_fds: list[int] = (), read_write_fds: list[int] = (), ruleset_fd: int | None = None
    ) -> None:
        """Restrict the calling process to the fixed paths plus the given dirs. Irreversible; the caller
        must have set no_new_privs first. ``ruleset_fd`` is one ``build`` made ahead (consumed: closed here),
        or None to build it now.

        Raises:
            OSError: the kernel refused.
        """
        if ruleset_fd is None:
            ruleset_fd = self.build()
        try:
            for fd in read_only_fds:
                self._add(ruleset_fd, fd, READ_ONLY)
            for fd in read_write_fds:
                self._add(ruleset_fd, fd, READ_WRITE)
            restricted = self._libc.syscall(
                ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_long(ruleset_fd), ctypes.c_long(0)
            )
            if restricted != 0:
                _raise_errno("landlock_restrict_self")
        finally:
            os.close(ruleset_fd)


def _open_path(path: str) -> int | None:
    try:
        low = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return fcntl.fcntl(low, fcntl.F_DUPFD_CLOEXEC, 10)  # clear of 0-3, which every child reassigns
    finally:
        os.close(low)
