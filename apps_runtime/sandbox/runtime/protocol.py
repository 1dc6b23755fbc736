"""The sandbox protocol: every message between the host, the zygote and a child, in the one module both
sides import. Standard library only: the child and the zygote import it under ``python -I -S`` with an
empty environment (see ``boot.py``), and at tier 1 only this package is mounted for them, so the module
lives here rather than next to the host's modules. ``docs/isolation.md`` describes the conversation.

Channels (who writes what, in order):
  launch   host -> zygote    ``LaunchConfig`` as the zygote's last argv entry (JSON)
  control  host <-> zygote   SOCK_SEQPACKET, one JSON message each: ``Ready`` once (zygote -> host), then
                             ``Spawn`` (with 3 fds), ``Arm``, ``Kill`` (host -> zygote)
  report   zygote -> host    a pipe per call, length-prefixed JSON: ``Forked``/``ForkFailed``, ``Exited``
  call     host <-> child    a socket per call, length-prefixed frames: ``CallConfig``, the handler's code
                             (raw, if announced), the request (JSON); then ``DataCall`` (child) answered by
                             ``Reply`` (host), any number of times; last, ``Result`` or ``Failure`` (child)

Trust: the host trusts the zygote's messages (platform code that runs no tenant code) and the child trusts
the host's. Everything a child sends is written by tenant code, which can forge any bytes on its socket:
``decode_child_frame`` bounds and checks it, and a child may only claim ``CHILD_FAILURE_KINDS``.

A frame is a 4-byte big-endian payload length followed by the payload. Reads use raw ``os.read`` with our
own buffer: a buffered reader hides bytes from ``select``/``poll`` and causes spurious timeouts.
"""

import json
import os
import struct
import time
from dataclasses import asdict, dataclass, field
from typing import Any

HEADER = struct.Struct(">I")

# -- exit codes of a child, read by the host from the zygote's exit report ---------------------------------
EXIT_OK = 0
EXIT_INTERNAL = 70  # the sandbox itself failed in the child
EXIT_NO_MEMORY = 86  # out of memory before a result could be sent (host: handler_resource_limit)

# -- failure kinds -------------------------------------------------------------------------------------------
# kind -> (HTTP status an edge should answer with, the generic title shown to callers). The one table: the
# front end, the gateway and jobs all read it. A handler over its memory or CPU limit is the handler's own
# failure, like an exception: 500 (507 is WebDAV's "Insufficient Storage", about the server's storage).
HANDLER_FAILURES = {
    "handler_error": (500, "The handler failed"),
    "handler_timeout": (504, "The handler timed out"),
    "handler_resource_limit": (500, "The handler exceeded a resource limit"),
    "output_too_large": (502, "The handler's response was too large"),
    "sandbox_unavailable": (503, "The handler could not be run"),
}
# Kinds a child may report about itself. The handler can forge any frame, so these must be kinds it could
# cause anyway; platform faults (sandbox_unavailable: alerts, job retries) and timeouts are for the host.
CHILD_FAILURE_KINDS = frozenset({"handler_error", "handler_resource_limit", "output_too_large"})

# -- data call operations (child -> host) -------------------------------------------------------------------
RECORDS_QUERY = "records.query"
RECORDS_GET = "records.get"
RECORDS_CREATE = "records.create"
RECORDS_UPDATE = "records.update"
RECORDS_DELETE = "records.delete"
JOBS_ENQUEUE = "jobs.enqueue"
# An HTTP request the host makes for the handler (the child has no network): checked against the app's
# ``egress``, with secrets and the caller's connection put in place by the host (docs/egress.md).
HTTP_REQUEST = "http.request"
# Operations that only read: a record the caller may not read is reported as missing, never as forbidden.
READ_OPS = frozenset({RECORDS_GET, RECORDS_QUERY})
OPS = frozenset(
    {RECORDS_QUERY, RECORDS_GET, RECORDS_CREATE, RECORDS_UPDATE, RECORDS_DELETE, JOBS_ENQUEUE, HTTP_REQUEST}
)
# Notices: data calls the child sends without waiting and the host never answers (progress and log
# lines for the caller). The host accepts at most MAX_NOTICES of them per call and ignores the rest.
PROGRESS = "call.progress"
LOG = "call.log"
NOTICE_OPS = frozenset({PROGRESS, LOG})
MAX_NOTICES = 10_000
MAX_LOG_NOTICES = 100  # log lines a call may send to its caller (all still go to the run's log)
MAX_NOTICE_CHARS = 1000  # of a progress message or a log line; longer ones are cut
# Progress pacing, in the SDK and again in the gateway's relay: a burst of PROGRESS_BURST notices goes
# out as it comes (a short call's few updates all arrive), then at most PROGRESS_PER_SECOND, the latest
# value winning; the last one always arrives.
PROGRESS_BURST = 5
PROGRESS_PER_SECOND = 10
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")  # RFC 5424
# What a failed data call reports; the handler sees the SDK exception of the same code.
# An outbound request refused for good (a rule: fix the app, the secret or the connection) or for now
# (a timeout, a busy budget, an unreachable upstream: try again later).
EGRESS_REFUSED, EGRESS_RETRYABLE = "egress_refused", "egress_retryable"
DATA_CALL_ERROR_CODES = frozenset(
    {"not_found", "permission_denied", "invalid", "limit", EGRESS_REFUSED, EGRESS_RETRYABLE}
)
# How ``request.secret(NAME)`` appears to the handler: the host puts the value in place (docs/egress.md).
SECRET_PLACEHOLDER = "{{lcp.secret:%s}}"

# -- bounds --------------------------------------------------------------------------------------------------
MAX_CONTROL_MESSAGE = 64 * 1024  # a control message or a zygote report
MAX_CALL_CONFIG = 64 * 1024
MAX_CODE_BYTES = 16 * 1024 * 1024  # a handler's marshalled code (its source is at most 256 KiB)
# Handler values (a response body, the data of a records call) may nest this many arrays/objects.
MAX_VALUE_DEPTH = 64
# The frame envelope adds two levels: {"result": {"body": value}} and {"op": ..., "args": {"data": value}}.
MAX_FRAME_DEPTH = MAX_VALUE_DEPTH + 2
MAX_TRACE_CHARS = 16 * 1024  # of a Failure's trace (shown to the tenant's developers)
MAX_DETAIL_CHARS = 64 * 1024  # of a Failure's detail (logged by the host)

# Frames are ASCII-only JSON (ensure_ascii): a lone surrogate in a string then round-trips instead of
# failing at UTF-8 encoding time.
_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
_CONTAINERS = (dict, list)


# == framing ================================================================================================
class FrameTooLarge(Exception):
    """A frame header announced more bytes than the reader accepts."""

    def __init__(self, size: int, limit: int):
        self.size = size
        self.limit = limit
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")


def dumps(value: object) -> bytes:
    """Encode ``value`` as a frame payload.

    Raises:
        TypeError, ValueError: ``value`` is not JSON (a set, an object, NaN, ...).
    """
    return _encoder.encode(value).encode("ascii")


def pack(payload: bytes) -> bytes:
    """Prefix ``payload`` with its length header."""
    return HEADER.pack(len(payload)) + payload


def write_frame(fd: int, payload: bytes) -> None:
    """Write one frame to a blocking fd, looping over short writes."""
    view = memoryview(pack(payload))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, limit: int | None = None) -> bytes | None:
    """Read one frame's payload from a blocking fd; ``None`` on end of file.

    Raises:
        FrameTooLarge: the header announces more than ``limit`` bytes.
        EOFError: the stream ended inside a frame.
    """
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if limit is not None and size > limit:
        raise FrameTooLarge(size, limit)
    payload = _read_exactly(fd, size)
    if payload is None:
        raise EOFError("stream ended inside a frame")
    return payload


class FrameDecoder:
    """Incremental decoder for a non-blocking stream: feed bytes, get whole payloads back."""

    def __init__(self, limit: int):
        self._limit = limit
        self._buffer = bytearray()
        self._need: int | None = None  # payload size of the frame being read, once its header is in

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data`` and return the payloads completed by it, in order.

        Raises:
            FrameTooLarge: a header announces more than the decoder's limit; the stream is then unusable.
        """
        self._buffer += data
        payloads = []
        while True:
            if self._need is None:
                if len(self._buffer) < HEADER.size:
                    return payloads
                (self._need,) = HEADER.unpack_from(self._buffer)
                del self._buffer[: HEADER.size]
                if self._need > self._limit:
                    raise FrameTooLarge(self._need, self._limit)
            if len(self._buffer) < self._need:
                return payloads
            payloads.append(bytes(self._buffer[: self._need]))
            del self._buffer[: self._need]
            self._need = None

    @property
    def pending(self) -> bool:
        """True while a partial frame is buffered."""
        return bool(self._buffer) or self._need is not None


# == untrusted JSON =========================================================================================
class FrameRejected(ValueError):
    """A payload the host refuses: not JSON, not an object, nested deeper than ``MAX_FRAME_DEPTH``, or not
    a message of the protocol.
    """

    def __init__(self, reason: str, *, too_deep: bool = False):
        self.reason = reason
        self.too_deep = too_deep
        super().__init__(reason)


def _depth_within(value: object, limit: int) -> bool:
    """True when ``value`` nests at most ``limit`` containers deep; level by level, without recursion."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    for _ in range(limit):
        below = []
        for container in level:
            items = container.values() if isinstance(container, dict) else container
            below += [item for item in items if isinstance(item, _CONTAINERS)]
        if not below:
            return True
        level = below
    return not level


def decode_frame(payload: bytes) -> dict:
    """The JSON object in ``payload``, which a handler (or a caller) wrote: nested within bounds.

    A deeply nested payload would make ``json.loads`` (and every recursive consumer after it: schema
    validation, ``json.dumps``, the ORM) raise RecursionError in the web process.

    Raises:
        FrameRejected: not a JSON object, or nested deeper than ``MAX_FRAME_DEPTH``.
    """
    # Fast path: a payload with few brackets cannot nest deeply (brackets inside strings only overcount).
    shallow = payload.count(b"[") + payload.count(b"{") <= MAX_FRAME_DEPTH
    try:
        frame = json.loads(payload)
    except RecursionError:
        # The C decoder checks the recursion limit at each level and unwinds cleanly.
        raise FrameRejected(f"nested deeper than {MAX_FRAME_DEPTH} levels", too_deep=True) from None
    except ValueError:
        raise FrameRejected("a frame that is not JSON") from None
    if not isinstance(frame, dict):
        raise FrameRejected("a frame that is not a JSON object")
    if not shallow and not _depth_within(frame, MAX_FRAME_DEPTH):
        raise FrameRejected(f"nested deeper than {MAX_FRAME_DEPTH} levels", too_deep=True)
    return frame


def _text(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


# == launch (host -> zygote, argv) ==========================================================================
@dataclass(frozen=True)
class LaunchConfig:
    """How the zygote confines itself and its children; fixed for the zygote's life."""

    tier: int
    probe_uid: list[int] | None = None  # [uid, gid] of the start-up probe child, when the host is root
    fd_paths: bool = False  # reach the stdlib and the bundle through O_PATH fds (see boot.py)
    ipc_namespace: bool = False  # an IPC namespace per child (tier 3 as root)
    # Set inside the sandbox by boot.py (fd -> real path), never sent.
    stdlib_fds: dict[int, str] = field(default_factory=dict, compare=False)

    def encode(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if k != "stdlib_fds"})

    @classmethod
    def decode(cls, config: dict) -> "LaunchConfig":
        """From the parsed argv JSON (plus ``stdlib_fds``, added by boot.py)."""
        return cls(
            tier=int(config["tier"]),
            probe_uid=config.get("probe_uid"),
            fd_paths=bool(config.get("fd_paths")),
            ipc_namespace=bool(config.get("ipc_namespace")),
            stdlib_fds=dict(config.get("stdlib_fds") or {}),
        )


# == control (host <-> zygote, SOCK_SEQPACKET) ==============================================================
@dataclass(frozen=True)
class Ready:
    """zygote -> host, once at start: ``ready`` is false if the tier is unavailable or its self-test
    (a probe child checking that the tier's blocks hold) failed.
    """

    ready: bool
    pid: int
    tier: str | None = None
    bytecode: str | None = None  # the zygote interpreter's .pyc magic (hex): the host may send it code
    selftest: dict = field(default_factory=dict)  # {"ok", "problems", ...}
    error: str | None = None  # why the tier is unavailable

    def encode(self) -> bytes:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}).encode()

    @classmethod
    def decode(cls, payload: bytes) -> "Ready":
        """Raises: ValueError: not a ready message (the zygote is not ours, or crashed mid-way)."""
        message = json.loads(payload)
        if not isinstance(message, dict) or not isinstance(message.get("ready"), bool):
            raise ValueError(f"not a ready message: {payload[:200]!r}")
        selftest = message.get("selftest")
        return cls(
            ready=message["ready"],
            pid=message.get("pid"),
            tier=message.get("tier"),
            bytecode=message.get("bytecode"),
            selftest=selftest if isinstance(selftest, dict) else {},
            error=message.get("error"),
        )


@dataclass(frozen=True)
class Spawn:
    """host -> zygote, with fds [protocol, log write end, report]: fork a *spare* child for a call slot, as
    ``uid`` ([uid, gid], None: no uid drop), warmed up ahead of its call when ``warm``.
    """

    id: int
    uid: list[int] | None
    warm: bool

    def encode(self) -> bytes:
        return json.dumps(
            {"cmd": "spawn", "id": self.id, "config": {"uid": self.uid, "warm": self.warm}}
        ).encode()


@dataclass(frozen=True)
class Arm:
    """host -> zygote: the spare of call ``id`` got its call; SIGKILL it at ``deadline`` (CLOCK_MONOTONIC)."""

    id: int
    deadline: float

    def encode(self) -> bytes:
        return json.dumps({"cmd": "arm", "id": self.id, "deadline": self.deadline}).encode()


@dataclass(frozen=True)
class Kill:
    """host -> zygote: SIGKILL the child of call ``id`` (no-op once it exited)."""

    id: int

    def encode(self) -> bytes:
        return json.dumps({"cmd": "kill", "id": self.id}).encode()


def decode_control(payload: bytes) -> Spawn | Arm | Kill | None:
    """A host -> zygote message; None for one this zygote does not know (ignored)."""
    message = json.loads(payload)
    cmd = message.get("cmd")
    if cmd == "spawn":
        config = message["config"]
        return Spawn(message["id"], config.get("uid") or None, bool(config.get("warm")))
    if cmd == "arm":
        return Arm(message.get("id"), float(message["deadline"]))
    if cmd == "kill":
        return Kill(message.get("id"))
    return None


# == reports (zygote -> host, a pipe per call) ==============================================================
@dataclass(frozen=True)
class Forked:
    """The child exists: from now on the handler may have run. Sent with the child's pidfd (SCM_RIGHTS), with
    which the host times a warm worker's calls itself (a pidfd names one process across PID namespaces).
    """

    def encode(self) -> bytes:
        return b'{"event":"forked"}'


@dataclass(frozen=True)
class ForkFailed:
    """The zygote could not fork the child (the last report of that call)."""

    error: str

    def encode(self) -> bytes:
        return dumps({"event": "fork_failed", "error": self.error})


@dataclass(frozen=True)
class Exited:
    """The child is gone: ``exitcode`` (negative: the signal that ended it), whether the zygote killed it at
    its deadline (``timed_out``) or on the host's ``Kill`` (``killed``).
    """

    exitcode: int
    timed_out: bool = False
    killed: bool = False

    def encode(self) -> bytes:
        return dumps(
            {"event": "exit", "exitcode": self.exitcode, "timed_out": self.timed_out, "killed": self.killed}
        )


def decode_report(payload: bytes) -> Forked | ForkFailed | Exited:
    """A zygote report (trusted: no tenant code can write the report pipe)."""
    report = json.loads(payload)
    event = report.get("event")
    if event == "forked":
        return Forked()
    if event == "fork_failed":
        return ForkFailed(str(report.get("error")))
    return Exited(int(report["exitcode"]), bool(report.get("timed_out")), bool(report.get("killed")))


# == call (host <-> child, a socket per call) ===============================================================
@dataclass(frozen=True)
class CallConfig:
    """host -> child, the call's first frame: written before any tenant code can reach the socket, so the
    child trusts it. When ``code`` is true the handler's marshalled code follows in a frame of its own, then
    the request (a JSON object) in the next.
    """

    bundle_dir: str  # the app version's files
    handler: str  # the handler's path relative to bundle_dir
    scratch_dir: str  # the call's own scratch dir
    limits: dict[str, int]  # SandboxLimits as a dict
    code: bool = False
    # A warm worker (see the host's workers.py): after its answer the child waits for the next call of the
    # same app version instead of exiting; ``reuse``: the handler it already loaded answers (no code follows).
    worker: bool = False
    reuse: bool = False

    def encode(self) -> bytes:
        # Not dataclasses.asdict: it deep-copies, and this is on every call's path.
        fields = {
            "bundle_dir": self.bundle_dir,
            "handler": self.handler,
            "scratch_dir": self.scratch_dir,
            "limits": self.limits,
            "code": self.code,
            "worker": self.worker,
            "reuse": self.reuse,
        }
        return dumps({"call": fields})

    @classmethod
    def decode(cls, payload: bytes) -> "CallConfig":
        return cls(**json.loads(payload)["call"])


def encode_request(request: dict) -> bytes:
    """host -> child, the call's last frame: the request the handler sees (``sdk.Request``).

    Raises:
        TypeError, ValueError: ``request`` is not JSON.
    """
    return dumps(request)


def decode_request(payload: bytes) -> dict:
    return json.loads(payload)


@dataclass(frozen=True, slots=True)
class DataCall:
    """child -> host: run ``op`` with ``args`` as the caller; answered by one ``Reply`` frame."""

    op: str
    args: dict

    def encode(self) -> bytes:
        """Raises: TypeError, ValueError: ``args`` is not JSON."""
        return dumps({"op": self.op, "args": self.args})


@dataclass(frozen=True, slots=True)
class Reply:
    """host -> child, the answer to a ``DataCall``: ``ok`` its value, or ``error`` [code, message]."""

    ok: Any = None
    error: tuple[str, str] | None = None

    def encode(self) -> bytes:
        if self.error is not None:
            return dumps({"error": {"code": self.error[0], "message": self.error[1]}})
        return dumps({"ok": self.ok})

    @classmethod
    def decode(cls, payload: bytes) -> "Reply":
        message = json.loads(payload)
        error = message.get("error")
        if error is not None:
            return cls(error=(str(error.get("code")), str(error.get("message"))))
        return cls(ok=message.get("ok"))


@dataclass(frozen=True, slots=True)
class Result:
    """child -> host, last frame: the handler answered. ``status`` is checked by the host (verdicts).

    ``asks``: instead of answering, the handler asked its caller questions (``request.ask``); they
    are checked by whoever can put them to a client (the MCP gateway).
    """

    status: Any
    body: Any
    # The child's peak resident memory in KiB, as it claims: only a hint for recycling a warm worker that
    # grew (a lie keeps a worker alive no longer than its call count and idle time; RLIMIT_AS still holds).
    rss_kb: int | None = None
    asks: Any = None


def encode_result(status: int, body: bytes, rss_kb: int = 0) -> bytes:
    """A ``Result`` frame around ``body``, already encoded by ``dumps`` (measured against the response
    limit first; not encoded twice).
    """
    return b'{"result":{"status":%d,"rss":%d,"body":' % (status, rss_kb) + body + b"}}"


def encode_input_required(questions: bytes, rss_kb: int = 0) -> bytes:
    """A ``Result`` frame that asks ``questions`` (encoded by ``dumps``) instead of answering."""
    return b'{"rss":%d,"input_required":' % rss_kb + questions + b"}"


@dataclass(frozen=True, slots=True)
class Failure:
    """child -> host, last frame: the handler did not answer. ``kind`` is one of ``HANDLER_FAILURES``; the
    host believes only ``CHILD_FAILURE_KINDS``.
    """

    kind: str
    trace: str = ""  # for the tenant's developers: bundle frames only, bundle-relative paths
    detail: str = ""  # for the platform's log

    def encode(self) -> bytes:
        return dumps({"failure": {"kind": self.kind, "trace": self.trace, "detail": self.detail}})


ChildFrame = DataCall | Result | Failure


def decode_child_frame(payload: bytes) -> ChildFrame:
    """A frame from a child, which tenant code may have forged: bounded, checked, typed.

    Raises:
        FrameRejected: not a JSON object, nested too deep, or not one of the child's messages.
    """
    frame = decode_frame(payload)
    if "op" in frame:
        op, args = frame.get("op"), frame.get("args")
        if not isinstance(op, str) or not isinstance(args, dict):
            raise FrameRejected("malformed data call")
        return DataCall(op, args)
    if "result" in frame:
        result = frame["result"]
        if isinstance(result, dict):
            rss = result.get("rss")
            return Result(result.get("status"), result.get("body"), rss if type(rss) is int else None)
    elif "input_required" in frame:
        rss = frame.get("rss")
        return Result(200, None, rss if type(rss) is int else None, asks=frame["input_required"])
    elif "failure" in frame:
        failure = frame["failure"]
        if isinstance(failure, dict):
            kind = failure.get("kind")
            return Failure(
                kind if isinstance(kind, str) else repr(kind)[:60],
                _text(failure.get("trace"), MAX_TRACE_CHARS),
                _text(failure.get("detail"), MAX_DETAIL_CHARS),
            )
    else:
        raise FrameRejected(f"unknown frame keys {sorted(frame)[:5]}")
    raise FrameRejected("malformed final frame")


class Pacer:
    """A token bucket: at most ``burst`` events at once, then ``per_second`` on average."""

    def __init__(self, burst: int, per_second: float, clock: Any = time.monotonic):
        self._clock = clock
        self.burst, self.per_second = burst, per_second
        self._tokens, self._at = float(burst), self._clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.per_second)
        self._at = now

    def take(self) -> bool:
        """Spend one event if the bucket has one."""
        self._refill()
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def wait(self) -> float:
        """Seconds until the next event may go (0 when one may go now)."""
        self._refill()
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.per_second


def progress_pacer() -> Pacer:
    return Pacer(PROGRESS_BURST, PROGRESS_PER_SECOND)
