"""The zygote: a warm, stdlib-only fork server. The host sends one control message per call; the zygote
forks a fresh child for it, kills the child at its wall-clock deadline and reports how it exited.

The messages (``Ready``, ``Spawn``, ``Arm``, ``Kill`` on the control socket; ``Forked``, ``ForkFailed``,
``Exited`` on each call's report pipe, which only the zygote writes, so a child cannot forge them) are
defined in ``protocol``. The host writes the call itself to the spare child's protocol socket.
"""

import gc
import importlib.util
import os
import select
import signal
import socket
import time

from . import child, hardening, protocol

# Imported once here so a handler's ``import json`` costs nothing in the child (copy-on-write after fork).
# Not ``threading``: once imported, its at-fork handler runs in every child (~110 pages copied, ~0.3 ms of
# CPU per call); a handler that uses threads imports it in its own child instead.
PRELOAD = (
    "base64",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "functools",
    "hashlib",
    "itertools",
    "json",
    "math",
    "random",
    "re",
    "statistics",
    "string",
    "textwrap",
    "typing",
    "uuid",
    "zoneinfo",
)


class _Call:
    __slots__ = ("call_id", "uid", "pid", "pidfd", "report_fd", "deadline", "timed_out", "killed")

    def __init__(
        self, call_id: int, uid: int | None, pid: int, pidfd: int, report_fd: int, deadline: float | None
    ):
        self.call_id = call_id
        self.uid = uid
        self.pid = pid
        self.pidfd = pidfd
        self.report_fd = report_fd
        self.deadline = deadline  # None while a spare waits for its call
        self.timed_out = False
        self.killed = False


def _report(fd: int, message: protocol.Forked | protocol.ForkFailed | protocol.Exited) -> None:
    try:
        protocol.write_frame(fd, message.encode())
    except OSError:
        pass  # the host stopped listening for this call (it already has the result, or gave up)


_FORKED = protocol.pack(protocol.Forked().encode())


def _report_forked(fd: int, pidfd: int) -> None:
    """``Forked``, with the child's pidfd: the host kills a warm worker at its call's deadline itself."""
    channel = socket.socket(fileno=fd)
    try:
        socket.send_fds(channel, [_FORKED], [pidfd])
    except OSError:
        pass  # the host stopped listening for this call
    finally:
        channel.detach()


def _kill_group(call: _Call) -> None:
    # The child leads its own process group (setsid), so killing the group also ends whatever it started.
    try:
        signal.pidfd_send_signal(call.pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already exited; waiting on the pidfd will collect it
    try:
        os.killpg(call.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # no group (the child died before setsid) or nothing left in it


class Zygote:
    """The fork server's state: the control socket and the children in flight."""

    def __init__(self, ctrl: socket.socket):
        self.ctrl = ctrl
        self.poller = select.poll()
        self.poller.register(ctrl.fileno(), select.POLLIN)
        self.calls: dict[int, _Call] = {}  # by pidfd
        self.by_id: dict[int, _Call] = {}
        self.by_uid: dict[int, _Call] = {}

    def serve(self) -> None:
        """Run until the host closes the control socket."""
        while True:
            ready = [fd for fd, _ in self.poller.poll(self._poll_timeout_ms())]
            # Exits first: a control message may reap a call (and close its pidfd) or open a new pidfd
            # that reuses a number of this batch, which must then not be taken for an exit.
            for fd in ready:
                call = self.calls.get(fd)
                if call is not None:
                    self._on_exit(call)
            if self.ctrl.fileno() in ready and not self._on_control():
                self._shutdown()
                return
            self._enforce_deadlines()

    def _poll_timeout_ms(self) -> int | None:
        pending = [
            c.deadline
            for c in self.calls.values()
            if c.deadline is not None and not c.timed_out and not c.killed
        ]
        if not pending:
            return None
        return max(0, int((min(pending) - time.monotonic()) * 1000) + 1)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for call in list(self.calls.values()):
            if call.deadline is not None and not call.timed_out and not call.killed and now >= call.deadline:
                call.timed_out = True
                _kill_group(call)

    def _on_control(self) -> bool:
        msg, fds, _flags, _addr = socket.recv_fds(self.ctrl, protocol.MAX_CONTROL_MESSAGE, 3)
        if not msg and not fds:
            return False
        try:
            message = protocol.decode_control(msg)
            if type(message) is protocol.Spawn and len(fds) == 3:
                self._spawn(message, *fds)
                fds = []
            elif type(message) is protocol.Arm:
                call = self.by_id.get(message.id)
                if call is not None and call.deadline is None:
                    call.deadline = message.deadline
            elif type(message) is protocol.Kill:
                call = self.by_id.get(message.id)
                if call is not None and not call.killed:
                    call.killed = True
                    _kill_group(call)
        finally:
            for fd in fds:
                os.close(fd)
        return True

    def _spawn(self, spawn: protocol.Spawn, proto_fd: int, log_fd: int, report_fd: int) -> None:
        uid = spawn.uid[0] if spawn.uid else None
        earlier = self.by_uid.get(uid) if uid is not None else None
        if earlier is not None:
            # The host reuses a slot's uid once it has the call's result, maybe before that child is gone:
            # reap it first, so that no two live calls ever share a uid (thread cap, signals, files).
            earlier.killed = True
            _kill_group(earlier)
            self._on_exit(earlier)
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(proto_fd)
            os.close(log_fd)
            _report(report_fd, protocol.ForkFailed(str(exc)))
            os.close(report_fd)
            return
        if pid == 0:
            try:
                child.main(spawn, proto_fd, log_fd)
            finally:
                os._exit(child.EXIT_INTERNAL)
        # Only the child may hold these: the host sees end of file when the child is gone.
        os.close(proto_fd)
        os.close(log_fd)
        pidfd = os.pidfd_open(pid)
        _report_forked(report_fd, pidfd)
        call = _Call(spawn.id, uid, pid, pidfd, report_fd, None)
        self.calls[call.pidfd] = call
        self.by_id[spawn.id] = call
        if uid is not None:
            self.by_uid[uid] = call
        self.poller.register(call.pidfd, select.POLLIN)

    def _on_exit(self, call: _Call) -> None:
        _, status = os.waitpid(call.pid, 0)
        try:
            os.killpg(call.pid, signal.SIGKILL)  # stragglers the child left in its group
        except (ProcessLookupError, PermissionError):
            pass
        self.poller.unregister(call.pidfd)
        del self.calls[call.pidfd]
        del self.by_id[call.call_id]
        if call.uid is not None and self.by_uid.get(call.uid) is call:
            del self.by_uid[call.uid]
        os.close(call.pidfd)
        _report(
            call.report_fd, protocol.Exited(os.waitstatus_to_exitcode(status), call.timed_out, call.killed)
        )
        os.close(call.report_fd)

    def _shutdown(self) -> None:
        for call in list(self.calls.values()):
            _kill_group(call)


def main(ctrl_fd: int, config: protocol.LaunchConfig) -> None:
    """Zygote entry point (called by ``boot.py``); ``config`` is the host's launch config (tier, uids)."""
    # Python's C-locale coercion exports LC_CTYPE; the children must see an empty environment.
    os.environ.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host decides when we stop: it closes the socket
    ctrl = socket.socket(fileno=ctrl_fd)
    for name in PRELOAD:
        __import__(name)
    try:
        confinement = hardening.prepare(config)
    except hardening.Unavailable as exc:
        ctrl.send(protocol.Ready(False, os.getpid(), error=str(exc)).encode())
        return
    child.prepare()
    child.prime()
    selftest = hardening.self_test(config.probe_uid)
    ready = protocol.Ready(
        selftest["ok"], os.getpid(), confinement.name, importlib.util.MAGIC_NUMBER.hex(), selftest
    )
    ctrl.send(ready.encode())
    if not selftest["ok"]:
        return
    # Objects that exist now are never collected; freezing them stops the children's GC from touching (and
    # so copying) the zygote's pages.
    gc.freeze()
    Zygote(ctrl).serve()
