"""Call slots: what one call in flight holds. When the platform runs as root, each slot is a uid of its own
(from a host-wide range, claimed so that no other sandbox on the host uses it at the same time) and a
scratch filesystem of bounded size.

A uid per call in flight is what makes per-call limits real: RLIMIT_NPROC counts the tasks of a *uid*, so
with one uid per call it caps that call's threads (and nobody else's); a handler cannot signal, ptrace or
share SysV IPC objects with another call (tier 3, where no seccomp filter stands in the way); files it
leaves behind are its own.
"""

import collections
import errno
import fcntl
import os
import pwd
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass, field

# Host-wide: the processes of one host (web workers, job workers, tests) claim disjoint blocks of uids here.
LOCK_DIR_NAME = "apps-sandbox-uids"
UID_BLOCK = 16


class NoFreeUids(Exception):
    """Every block of the uid range is taken by other sandboxes on this host (or by system users)."""


def _lock_dir() -> str:
    """A root-owned dir every process of the platform on this host agrees on (/run, else the temp dir)."""
    for base in ("/run", tempfile.gettempdir()):
        path = os.path.join(base, LOCK_DIR_NAME)
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
            return path
    raise NoFreeUids("no private dir to coordinate uid claims in (/run or the temp dir)")


class UidClaim:
    """``count`` uids from ``first``..``last`` that no other sandbox on this host holds while we live.

    Claimed in blocks of UID_BLOCK, each held by an flock on its own file: the kernel releases it when
    this process dies, however it dies. Blocks holding a uid known to the user database are skipped.
    """

    def __init__(self, first: int, last: int, count: int):
        """Raises:
        NoFreeUids: not enough free blocks in the range.
        """
        directory = _lock_dir()
        system_uids = {entry.pw_uid for entry in pwd.getpwall()}
        self._fds: list[int] = []
        self.uids: list[int] = []
        start = -(-first // UID_BLOCK) * UID_BLOCK  # blocks aligned on the uid itself: ranges may differ
        while len(self.uids) < count and start + UID_BLOCK - 1 <= last:
            block = range(start, start + UID_BLOCK)
            start += UID_BLOCK
            if system_uids.intersection(block):
                continue
            fd = os.open(
                os.path.join(directory, f"block-{block[0]}.lock"),
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    continue
                raise
            self._fds.append(fd)
            self.uids.extend(block)
        if len(self.uids) < count:
            self.close()
            raise NoFreeUids(
                f"fewer than {count} free uids in {first}-{last}: other sandboxes on this "
                f"host hold the rest (see SANDBOX_UID_RANGE)"
            )
        del self.uids[count:]

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)  # releases the flock
        self._fds = []


@dataclass
class Slot:
    """One call in flight: its uid/gid (None: no uid drop) and its scratch dir (a bounded tmpfs, if any)."""

    uid: int | None
    gid: int | None
    root: str
    # Call dirs that could not be removed (the handler wrote into them while being killed): retried when
    # the slot is released again, by which time the zygote has reaped that child.
    orphans: list[str] = field(default_factory=list)
    # The child forked ahead of the slot's next call (an exchange.Spare), if any; only hot slots keep one.
    spare: object = None
    hot: bool = False
    tmpfs: bool = False  # ``root`` is a tmpfs of its own (see scratch.py)

    @property
    def ids(self) -> list[int] | None:
        return [self.uid, self.gid] if self.uid is not None else None

    def new_call_dir(self, owned: bool) -> str:
        """A fresh, empty dir for one call; owned by the slot's uid when ``owned``."""
        path = tempfile.mkdtemp(prefix="call-", dir=self.root)
        if owned and self.uid is not None:
            os.chown(path, self.uid, self.gid)
        return path

    def clear(self, call_dir: str) -> None:
        """Remove ``call_dir`` (and what earlier calls left), so the slot's space is whole again."""
        for path in [*self.orphans, call_dir]:
            shutil.rmtree(path, ignore_errors=True)
        self.orphans = [path for path in (*self.orphans, call_dir) if os.path.lexists(path)]


class SlotPool:
    """Hands out slots first in, first out, the ``hot`` ones (those keeping a spare child, see
    ``Sandbox(prefork=...)``) before the others. A hot slot's spare is forked when the slot is released and
    has until the slot comes round again to get ready (handed out last-released-first, a sequential caller
    would wait for each fork); a released uid is reused as late as possible.
    """

    def __init__(self, slots: list[Slot], hot: int = 0):
        self.size = len(slots)
        for index, slot in enumerate(slots):
            slot.hot = index < hot
        self._hot = collections.deque(slots[:hot])
        self._cold = collections.deque(slots[hot:])
        self._cond = threading.Condition()
        self.waiting = 0  # calls waiting for a slot (a reading for the metrics)

    def acquire(self, timeout_s: float) -> Slot | None:
        """A free slot, waiting at most ``timeout_s``; None if none freed up."""
        with self._cond:
            self.waiting += 1
            try:
                if not self._cond.wait_for(lambda: self._hot or self._cold, timeout=max(0.0, timeout_s)):
                    return None
            finally:
                self.waiting -= 1
            return (self._hot or self._cold).popleft()

    @property
    def in_use(self) -> int:
        """Slots handed out and not yet released (a reading for the metrics: not locked)."""
        return self.size - len(self._hot) - len(self._cold)

    def release(self, slot: Slot) -> None:
        with self._cond:
            (self._hot if slot.hot else self._cold).append(slot)
            self._cond.notify()
