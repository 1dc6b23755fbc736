"""One call's conversation with its child, in the calling thread: send the request, serve data calls,
collect logs, and stop at the child's last frame, at the zygote's exit report, or at the backstop deadline.

Everything the child sends is untrusted data: frames are capped in size and nesting and checked before use.
"""

import dataclasses
import os
import select
import signal
import socket
import stat
import time
from dataclasses import dataclass, field

from .exceptions import BrokerError
from .invocation import Broker
from .limits import SandboxLimits
from .runtime import protocol
from .zygote_process import ZygoteLost, ZygoteProcess

# After the child's deadline the zygote kills it at once; past this margin the zygote itself is stuck.
BACKSTOP_MARGIN_S = 1.0
# How long the host waits for the zygote's Forked report (with the pidfd) of a warm worker's child.
FORKED_WAIT_S = 5.0
_FORKED_FRAME = protocol.pack(protocol.Forked().encode())
# Room for the frame envelope around a body of max_response_bytes, and for data call arguments.
FRAME_OVERHEAD = 64 * 1024
_READ_CHUNK = 256 * 1024
# Read at most this much per wake-up, so a child writing as fast as we read cannot keep this thread from
# its deadline checks, nor make it buffer without bound.
_READ_BUDGET = 1024 * 1024
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
# What a warm worker's fds 0-3 are (see runtime/child.py); any other fd of the runtime is a directory.
_RUNTIME_FD_KINDS = {0: stat.S_ISCHR, 1: stat.S_ISFIFO, 2: stat.S_ISFIFO, 3: stat.S_ISSOCK}
_IN = select.POLLIN | select.POLLHUP | select.POLLERR


@dataclass
class Transcript:
    """What happened during one call, before it is judged."""

    final: protocol.Result | protocol.Failure | None = None  # the child's last frame
    exit: protocol.Exited | protocol.ForkFailed | None = None  # the zygote's last report
    violation: str | None = None  # "output_too_large" | "too_deep" | "protocol": the host stopped the child
    violation_detail: str = ""
    forked: bool = False  # the zygote reported the fork, so the handler may have run
    zygote_lost: bool = False  # report pipe closed without an exit report
    zygote_hung: bool = False  # no exit report by the backstop deadline
    data_calls: int = 0
    notices: int = 0  # progress and log notices (protocol.NOTICE_OPS)
    log: bytearray = field(default_factory=bytearray)
    log_dropped: int = 0
    duration_ms: float = 0.0
    kept: bool = False  # a warm worker answered cleanly and waits for its next call (not killed)
    stray: bool = False  # a warm worker sent more after its last frame: a request for an ended call


class _Conversation:
    def __init__(self, limits: SandboxLimits, broker: Broker, transcript: Transcript):
        self.limits = limits
        self.broker = broker
        self.t = transcript
        self.outbox = bytearray()
        self.frames = protocol.FrameDecoder(limits.max_response_bytes + FRAME_OVERHEAD)
        self.reports = protocol.FrameDecoder(protocol.MAX_CONTROL_MESSAGE)
        self.child_deadline = 0.0
        self.after_final = False  # frames came after the last one

    # -- logs ---------------------------------------------------------------------------------------------
    def on_log(self, data: bytes) -> None:
        room = self.limits.max_log_bytes - len(self.t.log)
        if room > 0:
            self.t.log += data[:room]
        self.t.log_dropped += max(0, len(data) - max(room, 0))

    def violate(self, kind: str, detail: str) -> None:
        """The child broke the protocol: the host stops listening and kills it."""
        self.t.violation, self.t.violation_detail = kind, detail

    # -- protocol -----------------------------------------------------------------------------------------
    def on_protocol(self, data: bytes) -> None:
        try:
            payloads = self.frames.feed(data)
        except protocol.FrameTooLarge as exc:
            self.violate("output_too_large", str(exc))
            return
        for payload in payloads:
            if self.t.final is not None or self.t.violation is not None:
                self.after_final = True
                return
            try:
                frame = protocol.decode_child_frame(payload)
            except protocol.FrameRejected as exc:
                self.violate("too_deep" if exc.too_deep else "protocol", exc.reason)
                return
            if type(frame) is protocol.DataCall:
                self.on_data_call(frame)
            else:
                self.t.final = frame

    def on_data_call(self, call: protocol.DataCall) -> None:
        if time.monotonic() >= self.child_deadline:
            return  # the zygote is killing the child; don't spend the platform's time on it
        if call.op in protocol.NOTICE_OPS:
            self.on_notice(call)
            return
        self.t.data_calls += 1
        if self.t.data_calls > self.limits.max_data_calls:
            reply = protocol.Reply(error=("limit", f"more than {self.limits.max_data_calls} data calls"))
        else:
            try:
                reply = protocol.Reply(ok=self.broker(call.op, call.args))
            except BrokerError as exc:
                reply = protocol.Reply(error=(exc.code, exc.message))
        self.outbox += protocol.pack(reply.encode())

    def on_notice(self, call: protocol.DataCall) -> None:
        # Never answered: the child does not wait. Not data calls either, so they spend none of those.
        self.t.notices += 1
        if self.t.notices > protocol.MAX_NOTICES:
            return
        try:
            self.broker(call.op, call.args)
        except BrokerError:
            pass  # a malformed notice is dropped; the handler never learns of it

    # -- zygote reports -----------------------------------------------------------------------------------
    def on_report(self, data: bytes) -> None:
        for payload in self.reports.feed(data):
            report = protocol.decode_report(payload)
            if type(report) is protocol.Forked:
                self.t.forked = True
            else:
                self.t.exit = report

    @property
    def done(self) -> bool:
        return self.t.final is not None or self.t.violation is not None or self.t.exit is not None


def _read_ready(fd: int) -> tuple[bytes, bool]:
    """Read what poll said is there: one read, unless it filled a whole chunk (then on to the budget). A short
    read took all there was (a stream socket or a pipe hands over what it holds), so no second read waits for
    EAGAIN; what comes later wakes the poll again. Returns (data, at_eof).
    """
    try:
        chunk = os.read(fd, _READ_CHUNK)
    except BlockingIOError:
        return b"", False
    except (ConnectionResetError, BrokenPipeError):
        return b"", True
    if not chunk:
        return b"", True
    if len(chunk) < _READ_CHUNK:
        return chunk, False
    more, eof = _read_available(fd, _READ_BUDGET - len(chunk))
    return chunk + more, eof


def _read_available(fd: int, budget: int = _READ_BUDGET) -> tuple[bytes, bool]:
    """Read what is there (up to about ``budget`` bytes) without blocking; returns (data, at_eof)."""
    chunks = []
    total = 0
    while total < budget:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return b"".join(chunks), False
        except (ConnectionResetError, BrokenPipeError):
            return b"".join(chunks), True
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks), False


class Spare:
    """A child the zygote forked ahead of its call, for one call slot: the host's ends of its protocol
    socket, log pipe and report pipe. Used for exactly one call (``exchange``), or closed unused (the child
    then sees end of file and exits); a warm worker's is used for one call at a time (``keep``).
    """

    def __init__(self, zygote: ZygoteProcess, call_id: int, uid: list[int] | None, ahead: bool = True):
        """Ask ``zygote`` to fork the child; it applies what no call changes and waits for its call (made
        ``ahead`` of it, it also warms its code path up first).

        Raises:
            ZygoteLost: the zygote is gone or not reading its control socket.
        """
        self.zygote = zygote
        self.call_id = call_id
        self.pidfd: int | None = None  # a warm worker's, from the Forked report (see ``take_pidfd``)
        self._task_fd: int | None = None  # its /proc/<pid>/task, kept open: its threads, after every call
        self._fd_dir: int | None = None  # its /proc/<pid>/fd: the fds it holds, after every call
        self._statm: int | None = None  # its /proc/<pid>/statm: the memory it holds, after every call
        self._proc: str | None = None  # /proc/<pid>, in our PID namespace
        self.sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.log_r, log_w = os.pipe()
        # A socket, not a pipe: the Forked report carries the child's pidfd.
        report, report_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.report_r, report_w = report.detach(), report_end.detach()
        try:
            zygote.spawn(protocol.Spawn(call_id, uid, ahead), [child_sock.fileno(), log_w, report_w])
        except ZygoteLost:
            self.close()
            raise
        finally:
            # Only the child (and the zygote, for the report) may hold these, or no end of file ever comes.
            child_sock.close()
            os.close(log_w)
            os.close(report_w)
        # The host's ends never block (the exchange polls them); set once here, not on every call of a worker.
        self.sock.setblocking(False)
        os.set_blocking(self.log_r, False)
        os.set_blocking(self.report_r, False)

    def take_pidfd(self) -> bool:
        """Read the zygote's first report, ``Forked`` with the child's pidfd, for a warm worker (whose calls
        the host times itself). False when the child was not forked, or no report came in time.
        """
        if self.pidfd is not None:
            return True
        channel = socket.socket(fileno=self.report_r)
        try:
            channel.settimeout(FORKED_WAIT_S)
            data, fds, _flags, _addr = socket.recv_fds(channel, len(_FORKED_FRAME), 1)
        except OSError:
            return False
        finally:
            channel.detach()
        if data != _FORKED_FRAME or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            return False
        self.pidfd = fds[0]
        try:
            # The pidfd's fdinfo names the process in our own PID namespace, whatever namespace it is in.
            with open(f"/proc/self/fdinfo/{self.pidfd}") as info:
                pid = next(int(line.split()[1]) for line in info if line.startswith("Pid:"))
            self._proc = f"/proc/{pid}"
            self._task_fd = os.open(f"{self._proc}/task", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except (OSError, StopIteration, ValueError):
            return False
        try:
            # Readable by the host as root; a host of the handler's own uid may not look into a process that
            # made itself not dumpable (then only the limits bound it, see docs/isolation.md).
            self._fd_dir = os.open(f"{self._proc}/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._statm = os.open(f"{self._proc}/statm", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass
        return True

    def fd_count(self) -> int:
        """How many fds a warm worker holds now (-1: unknown, or it is gone)."""
        try:
            # procfs gives a /proc/<pid>/fd dir the number of open fds as its size (Linux 6.2+): one fstat.
            size = os.fstat(self._fd_dir).st_size
        except (OSError, TypeError):
            return -1
        return size if size > 0 else len(self._fd_names())

    def _fd_names(self) -> list[str]:
        try:
            return os.listdir(f"{self._proc}/fd")
        except (OSError, TypeError):
            return []

    def held_files(self) -> int:
        """Fds a warm worker holds beyond the runtime's own (0-3: /dev/null, the log pipe, the protocol
        socket; and directories, reached by path fds): files, pipes, sockets and in-memory files its calls
        opened, whose memory no limit of the process counts. -1 when it cannot be read.
        """
        names = self._fd_names()
        if not names:
            return -1
        held = 0
        for name in names:
            kind = _RUNTIME_FD_KINDS.get(int(name), stat.S_ISDIR)
            try:
                if not kind(os.stat(f"{self._proc}/fd/{name}").st_mode):
                    held += 1
            except OSError:
                held += 1  # gone meanwhile, or a target we may not stat: not the runtime's
        return held

    def resident_kb(self) -> int | None:
        """The memory a warm worker holds now (its resident set, mapped shared memory included), measured by
        the host: never the worker's own word. None when it cannot be read (it is gone).
        """
        try:
            fields = os.pread(self._statm, 128, 0).split()
            return int(fields[1]) * _PAGE_KB
        except (OSError, TypeError, ValueError, IndexError):
            return None

    def threads(self) -> int:
        """How many threads a warm worker runs now (0: it is gone)."""
        try:
            links = os.fstat(self._task_fd).st_nlink
        except (OSError, TypeError):
            return 0
        # procfs counts a task dir's links as 2 plus the process's live threads (proc_task_getattr), 2 once
        # it is gone: one fstat, where reading /proc/<pid>/stat made the kernel format some 50 fields.
        return max(0, links - 2)

    def idle_clean(self) -> bool:
        """A kept worker between calls: True when it sent nothing since its last answer and is alive. Its
        log output meanwhile (a thread it left running) is dropped.

        A frame here would be a request for a call that ended (a thread the handler left running): the
        caller's identity went with that call, so the worker must be retired, never answered.
        """
        if self.sock is None:
            return False
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(self.report_r, select.POLLIN)
        poller.register(self.log_r, select.POLLIN)
        for fd, _event in poller.poll(0):
            if fd != self.log_r:
                return False
            _, eof = _read_available(self.log_r)
            if eof:
                return False
        return True

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            os.close(self.log_r)
            os.close(self.report_r)
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None
            for name in ("_task_fd", "_fd_dir", "_statm"):
                fd = getattr(self, name)
                if fd is not None:
                    os.close(fd)
                    setattr(self, name, None)
            self.sock = None


def _keep_or_retire(conv: _Conversation) -> None:
    """After a warm worker's clean answer: keep it for its next call, unless it sent more after the answer
    (a request for a call that is over) in what the host has read. Anything it sends later is found by
    ``Spare.idle_clean`` before the worker is given another call (or counted by the pool's stats), so no
    read here waits for EAGAIN on every call.
    """
    t = conv.t
    if conv.after_final or conv.frames.pending:
        t.stray = True
        return
    t.kept = True


def exchange(
    spare: Spare,
    config: protocol.CallConfig | bytes,
    request_payload: bytes,
    limits: SandboxLimits,
    broker: Broker,
    code: bytes | None = None,
    keep: bool = False,
) -> Transcript:
    """Run one call in ``spare`` (which is closed on return) and record what happened. On return the child
    has exited, or the zygote has been told to kill it. ``code`` is the handler's marshalled code, if the
    host has it (the child compiles the source otherwise); ``config.code`` says whether it is given.

    Exceptions raised by ``broker`` other than BrokerError propagate (after the child is killed): they are
    the platform's own faults, not the handler's.

    With ``keep`` (a warm worker, whose pidfd ``spare.take_pidfd()`` got), the host kills the child at the
    call's deadline itself, through its pidfd: no message to the zygote per call. A child that answers cleanly
    and with nothing after its answer is left running for its next call (``Transcript.kept``); otherwise it is
    killed.
    """
    t = Transcript()
    conv = _Conversation(limits, broker, t)
    started = time.monotonic()
    armed = False
    try:
        conv.child_deadline = started + limits.timeout_ms / 1000
        if keep:
            t.forked = True  # take_pidfd read the report
        else:
            try:
                spare.zygote.arm(spare.call_id, conv.child_deadline)
            except ZygoteLost:
                t.zygote_lost = True
                return t
        armed = True
        _converse(spare, conv, config, request_payload, code, keep)
    finally:
        try:
            if armed and t.exit is None and not t.kept:
                spare.zygote.kill_call(spare.call_id)
        finally:
            if not t.kept:
                spare.close()
    t.duration_ms = (time.monotonic() - started) * 1000
    return t


def _converse(
    spare: Spare,
    conv: _Conversation,
    config: protocol.CallConfig | bytes,
    request_payload: bytes,
    code: bytes | None,
    keep: bool,
) -> None:
    """Send the call, then serve the child until its last frame, the zygote's exit report or the deadline."""
    t = conv.t
    host_sock, log_r, report_r = spare.sock, spare.log_r, spare.report_r
    proto = host_sock.fileno()
    # The call's config first: the child reads it before any tenant code runs, so it can trust it. One write
    # for all the call's frames: the socket buffer takes a small request whole, and the child is waiting.
    frames = [protocol.pack(config if type(config) is bytes else config.encode())]
    if code is not None:
        frames.append(protocol.pack(code))
    frames.append(protocol.pack(request_payload))
    conv.outbox += b"".join(frames)
    try:
        del conv.outbox[: host_sock.send(conv.outbox)]
    except (BlockingIOError, BrokenPipeError, ConnectionResetError):
        pass  # the poll loop sends the rest, or sees the child gone
    backstop = conv.child_deadline + BACKSTOP_MARGIN_S
    killed_at_deadline = False
    poller = select.poll()
    poller.register(log_r, select.POLLIN)
    poller.register(report_r, select.POLLIN)
    proto_open = True

    while not conv.done:
        if proto_open:
            poller.register(proto, select.POLLIN | (select.POLLOUT if conv.outbox else 0))
        until = backstop if not keep or killed_at_deadline else conv.child_deadline
        events = poller.poll(max(0.0, until - time.monotonic()) * 1000)
        for fd, event in events:
            if fd == proto:
                if event & select.POLLOUT and conv.outbox:
                    try:
                        sent = host_sock.send(conv.outbox)
                        del conv.outbox[:sent]
                    except (BrokenPipeError, ConnectionResetError):
                        conv.outbox.clear()
                if event & _IN:
                    data, eof = _read_ready(proto)
                    conv.on_protocol(data)
                    if eof:
                        poller.unregister(proto)
                        proto_open = False
            elif fd == log_r:
                data, eof = _read_ready(log_r)
                conv.on_log(data)
                if eof:
                    poller.unregister(log_r)
            elif fd == report_r:
                data, eof = _read_ready(report_r)
                conv.on_report(data)
                if eof and t.exit is None:
                    t.zygote_lost = True
                    break
        if t.zygote_lost:
            break
        if keep and not conv.done and not killed_at_deadline and time.monotonic() >= conv.child_deadline:
            killed_at_deadline = True  # the zygote reaps it and reports its exit
            try:
                signal.pidfd_send_signal(spare.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass  # exited meanwhile: its exit report is on the way
        if not conv.done and time.monotonic() >= backstop:
            t.zygote_hung = True  # checked after the events: a slow broker call must not look like this
            break

    # Whatever the child wrote before it finished is in the buffers now: take the rest.
    # (The child has exited or sent its last frame, so at most a socket or pipe buffer is left.)
    if proto_open and t.final is None and t.violation is None:
        conv.on_protocol(_read_available(proto, conv.limits.max_response_bytes + FRAME_OVERHEAD)[0])
    conv.on_log(_read_available(log_r)[0])
    if killed_at_deadline and type(t.exit) is protocol.Exited:
        t.exit = dataclasses.replace(t.exit, timed_out=True)
    if keep and type(t.final) is protocol.Result and t.violation is None and t.exit is None:
        _keep_or_retire(conv)
