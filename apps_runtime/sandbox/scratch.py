"""Scratch space: each Sandbox's private dir, one size-bounded filesystem per call slot, and the removal of
the dirs a killed server left behind.

Layout (``<parent>`` is the ``scratch_root`` option, by default the system temp dir):

    <parent>/apps-sandbox-XXXXXXXX/    0711, the platform's
        owner                           0600: which process made it (pid, start time, pid namespace, boot),
                                        flock-ed by that process for as long as it lives
        calls/                          0711; the only part mounted into tier 1's namespace
            <slot>/                     a tmpfs of the per-call size (0700, the slot's uid) when we can mount
                call-XXXXXXXX/          the call's cwd (0700, the slot's uid), removed after the call

A tmpfs per slot bounds what one call can write in total (ENOSPC), files and inodes alike; it is mounted
once, when the sandbox starts, so calls pay nothing for it. Mounting needs root (CAP_SYS_ADMIN): elsewhere
the slots are plain dirs and only the per-file limit (RLIMIT_FSIZE) holds.

Which dirs are stale: the owner file's lock tells. The sandbox that made a dir holds an exclusive flock on
its owner file until it closes or its process dies (the kernel drops it then, however the process ends),
so a dir whose lock another process can take belongs to nobody alive, in any PID namespace; a dir whose
lock is held is a live server's and is never touched. Dirs of older versions (no lock) are judged by the
owner's pid and start time, as before.
"""

import ctypes
import errno
import fcntl
import json
import logging
import os
import shutil
import stat
import tempfile

logger = logging.getLogger("apps_runtime.sandbox")

PREFIX = "apps-sandbox-"
OWNER_FILE = "owner"
CALLS_DIR = "calls"
INODES_PER_SLOT = 4096  # files and dirs one call may create in its scratch space
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MNT_DETACH = 2

_libc = None


def _c_library():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount_tmpfs(path: str, size_bytes: int, uid: int, gid: int) -> None:
    options = f"size={size_bytes},nr_inodes={INODES_PER_SLOT},mode=0700,uid={uid},gid={gid}"
    _check(
        _c_library().mount(
            b"tmpfs", os.fsencode(path), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, options.encode()
        ),
        f"mount tmpfs on {path}",
    )


def _unmount(path: str) -> None:
    # Detached: a mount still held open (a zygote being torn down) goes away when its last user does.
    _check(_c_library().umount2(os.fsencode(path), _MNT_DETACH), f"umount {path}")


# -- who made a dir ----------------------------------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks after boot): with the pid, it names one process for good."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _boot_id() -> str:
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def _owner_record() -> dict:
    pid = os.getpid()
    return {
        "pid": pid,
        "start": _start_time(pid),
        "pidns": os.stat("/proc/self/ns/pid").st_ino,
        "boot": _boot_id(),
        "locked": True,  # its maker holds the owner file's flock while it lives (see the module's doc)
    }


def _owner_is_gone(record: object) -> bool:
    """True only when the process that wrote ``record`` provably no longer runs; False when in doubt."""
    if not isinstance(record, dict):
        return False
    try:
        if record.get("boot") != _boot_id():
            return isinstance(record.get("boot"), str)  # written before this boot: nothing of it survives
        if record.get("pidns") != os.stat("/proc/self/ns/pid").st_ino:
            return False  # another PID namespace (a container sharing the dir): its pids mean nothing here
    except OSError:
        return False
    pid, start = record.get("pid"), record.get("start")
    if type(pid) is not int or pid <= 0 or type(start) is not int:
        return False
    return _start_time(pid) != start  # gone, or the pid now belongs to a newer process


def _is_stale(directory: str) -> bool:
    """Whether the scratch dir's maker is provably gone: its owner file's lock is free (and the file says
    its maker locks it), or, for a dir of an older version, its pid runs nothing or a newer process.
    False when in doubt (no owner file, not ours, unreadable).
    """
    try:
        fd = os.open(os.path.join(directory, OWNER_FILE), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_size > 4096:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return False  # held: a live sandbox's
        record = json.loads(os.read(fd, 4096))
        if isinstance(record, dict) and record.get("locked") is True:
            return True
        return _owner_is_gone(record)
    except (OSError, ValueError):
        return False
    finally:
        os.close(fd)  # drops our lock


def _mounts_under(directory: str) -> list[str]:
    """Mount points strictly below ``directory``, deepest first."""
    found = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 4:
                    # Spaces, tabs, newlines and backslashes in a mount point are octal escapes.
                    point = fields[4].encode().decode("unicode_escape").encode("latin-1").decode()
                    if point.startswith(directory + os.sep):
                        found.append(point)
    except (OSError, UnicodeError):
        pass
    return sorted(found, key=len, reverse=True)


def _remove_tree(directory: str) -> None:
    for point in _mounts_under(directory):
        try:
            _unmount(point)
        except OSError as exc:
            logger.warning("Cannot unmount %s: %s", point, exc)
    shutil.rmtree(directory, ignore_errors=True)


def remove_stale(parent: str) -> list[str]:
    """Remove the scratch dirs in ``parent`` that a sandbox of ours left when its process was killed:
    only dirs named like ours, owned by our uid, holding an owner file whose lock nobody holds (or, written
    by an older version, whose process is provably gone): never a live sandbox's, whatever its owner file
    says. Their slot filesystems are unmounted first. Returns the dirs removed.
    """
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if _is_stale(entry.path):
            _remove_tree(entry.path)
            removed.append(entry.path)
    if removed:
        logger.info(
            "Removed %d scratch dir(s) left by a sandbox whose process is gone: %s",
            len(removed),
            ", ".join(removed),
        )
    return removed


# -- this sandbox's scratch area ---------------------------------------------------------------------------


class ScratchArea:
    """This sandbox's private dir under ``parent`` and its slots. Only the creating process removes it, in
    ``close()``, which a server calls on its way out (``supervisor.close_sandbox``); while it lives it holds
    the owner file's lock, so no other sandbox takes the dir for stale.
    """

    def __init__(self, parent: str):
        """Create the private dir (and ``parent`` if missing), first removing stale ones.

        Raises:
            OSError: ``parent`` cannot be created or written.
        """
        os.makedirs(parent, mode=0o711, exist_ok=True)
        remove_stale(parent)
        self.owner_pid = os.getpid()
        self.root = os.path.realpath(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        # The sandbox uids must reach their own call dirs by path, but may not list anyone else's.
        os.chmod(self.root, 0o711)
        # Locked before it says anything: nobody can find it unlocked while we live. Kept open (and so
        # locked) until close(); close-on-exec, so the zygote never holds it.
        self._owner_fd = os.open(
            os.path.join(self.root, OWNER_FILE),
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        fcntl.flock(self._owner_fd, fcntl.LOCK_EX)
        os.write(self._owner_fd, json.dumps(_owner_record()).encode())
        self.calls = os.path.join(self.root, CALLS_DIR)
        os.mkdir(self.calls, 0o711)
        os.chmod(self.calls, 0o711)  # whatever the umask
        self._mounts: list[str] = []
        self.unbounded_reason: str | None = None  # why slots are plain dirs, if they are

    def make_slot(self, name: str, size_bytes: int, uid: int | None, gid: int | None) -> str:
        """A slot dir of at most ``size_bytes`` (when this host lets us mount), owned by ``uid``."""
        path = os.path.join(self.calls, name)
        os.mkdir(path, 0o700)
        if uid is not None and self.unbounded_reason is None:
            try:
                _mount_tmpfs(path, size_bytes, uid, gid)
                self._mounts.append(path)
                return path
            except OSError as exc:
                reason = "not root" if exc.errno == errno.EPERM and os.geteuid() else str(exc)
                self.unbounded_reason = f"cannot mount a tmpfs per call ({reason})"
        elif uid is None:
            self.unbounded_reason = "the platform does not run as root (no tmpfs per call)"
        if uid is not None:
            os.chown(path, uid, gid)
        return path

    def bounded(self, path: str) -> bool:
        """Whether the slot dir ``path`` is a tmpfs of its own (``make_slot`` could mount one)."""
        return path in self._mounts

    def close(self) -> None:
        """Unmount the slots and remove the private dir (in the creating process only)."""
        if os.getpid() != self.owner_pid:
            return
        for path in self._mounts:
            try:
                _unmount(path)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOENT):  # already gone
                    logger.warning("Cannot unmount %s: %s", path, exc)
        self._mounts = []
        shutil.rmtree(self.root, ignore_errors=True)
        if self._owner_fd is not None:
            os.close(self._owner_fd)
            self._owner_fd = None
