"""One invocation, inside a freshly forked child of the zygote. Never returns: ends with ``os._exit``.

File descriptors in the child: 0 is /dev/null, 1 and 2 are the log pipe (so ``print``, ``os.write(1, ...)``
and subprocess output can never reach the protocol), 3 is the private protocol socket. Nothing else, except
(in fd_paths mode, see ``boot.py``) read-only O_PATH handles on the standard library and the bundle.
"""

import errno
import fcntl
import io
import marshal
import os
import resource
import signal
import sys
import types

from . import hardening, protocol, sdk, traces

PROTO_FD = 3
EXIT_OK = protocol.EXIT_OK
EXIT_NO_MEMORY = protocol.EXIT_NO_MEMORY
EXIT_INTERNAL = protocol.EXIT_INTERNAL

HANDLER_MODULE = "__handler__"
_DISK_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))

# Set by prepare(), in the zygote, so that forks do not redo the work.
_die_with_parent = None  # arms PR_SET_PDEATHSIG (None when ctypes is unavailable)
_prctl = None  # libc's prctl through ctypes (None when ctypes is unavailable)
PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
_zygote_pid = 0
_stdlib_path: list[str] = []
_proto_ready = False  # fd 3 is the protocol socket: failures can be reported as a frame
_log_streams: list = []  # our stdout/stderr wrappers: flushed even if the handler swapped sys.stdout
# The zygote's own sys.stdout and sys.stderr, held so that no child frees (and so copies) them on replacing.
_zygote_streams: list = []
_warm_up_code = b""  # the warm-up handler, marshalled: compiled once here, not in every spare
# A warm worker's loaded handlers, by path in the bundle: their modules (and so their globals) live as long
# as the worker, which serves one app version only.
_handlers: dict[str, tuple[types.ModuleType, object]] = {}
# Its scrubber: the same bundle and scratch dir on every call, and resolving the bundle's real path cost a
# few lstat calls each time. Keyed by everything it is built from.
_scrubbers: dict[tuple[str, str, str], traces.Scrubber] = {}


def prepare() -> None:
    """Zygote-time setup: resolve what every child needs, so forks do not redo it."""
    global _die_with_parent, _prctl, _zygote_pid, _stdlib_path, _warm_up_code
    _zygote_pid = os.getpid()
    _log_streams[:] = _make_log_streams()
    _zygote_streams[:] = [sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__]
    _warm_up_code = marshal.dumps(compile(_WARM_UP_SOURCE, "<warm-up>", "exec", dont_inherit=True))
    _stdlib_path = list(sys.path)  # -I -S: the standard library only
    try:
        import ctypes

        # Looked up (dlsym, a new function object) here, not in every child.
        prctl = _prctl = ctypes.CDLL(None, use_errno=True).prctl

        def _arm() -> None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)

        _die_with_parent = _arm
    except (ImportError, OSError, AttributeError):
        _die_with_parent = None


class _Failure(Exception):
    """The invocation failed in a way reported to the host as ``kind``."""

    def __init__(self, kind: str, trace: str = "", detail: str = ""):
        super().__init__(kind)
        self.kind = kind
        self.trace = trace
        self.detail = detail


def _take_fds(proto_fd: int, log_fd: int) -> None:
    global _proto_ready
    # Move both fds above the target numbers first: either may currently sit on 1, 2 or 3.
    high_proto = fcntl.fcntl(proto_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    high_log = fcntl.fcntl(log_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.dup2(high_log, 1)
    os.dup2(high_log, 2)
    os.dup2(high_proto, PROTO_FD, inheritable=False)  # a subprocess must not inherit the protocol
    _proto_ready = True
    out, err = _log_streams
    sys.stdout = sys.__stdout__ = out
    sys.stderr = sys.__stderr__ = err


def _log_stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(
        io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
    )


def _make_log_streams() -> list[io.TextIOWrapper]:
    """The children's stdout and stderr (on fds 1 and 2, the log pipe in every child), made once in the
    zygote: building them cost each child ~80 copied pages. Made while a pipe sits on fds 1 and 2,
    as in a child, so that they know they cannot seek. Each child writes to its own copy.
    """
    read_end, write_end = os.pipe()
    saved = [os.dup(1), os.dup(2)]
    try:
        streams = []
        for fd in (1, 2):
            os.dup2(write_end, fd)
            streams.append(_log_stream(fd))  # asks the fd whether it can seek, once
        return streams
    finally:
        for fd, old in zip((1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)
        os.close(read_end)
        os.close(write_end)


def _become_child(proto_fd: int, log_fd: int) -> None:
    if _die_with_parent is not None:
        _die_with_parent()
        if os.getppid() != _zygote_pid:  # the zygote died before the signal was armed
            os._exit(EXIT_INTERNAL)
    os.setsid()  # own process group: the zygote kills the whole group on timeout
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    _take_fds(proto_fd, log_fd)
    os.umask(0o077)


class _Channel:
    """Blocking request/reply over the protocol socket, for the SDK's data calls."""

    def __init__(self, fd: int):
        self._fd = fd

    def call(self, op: str, args: dict):
        try:
            payload = protocol.DataCall(op, args).encode()
        except (TypeError, ValueError) as exc:
            raise TypeError(f"arguments of {op} must be JSON: {exc}") from None
        protocol.write_frame(self._fd, payload)
        payload = protocol.read_frame(self._fd)
        if payload is None:
            raise ConnectionError("the platform closed the data channel")
        reply = protocol.Reply.decode(payload)
        if reply.error is not None:
            raise sdk.records_error(*reply.error, op)
        return reply.ok

    def notify(self, op: str, args: dict) -> None:
        """A notice (``protocol.NOTICE_OPS``): the host never answers it, so nothing is read."""
        protocol.write_frame(self._fd, protocol.DataCall(op, args).encode())


def _check_handler_path(config: protocol.CallConfig) -> "_Failure | None":
    """The handler must be a file inside the bundle (symlinks resolved). Checked before hardening, while the
    whole path to the bundle can still be resolved; bundles never change once unpacked.
    """
    bundle_dir = config.bundle_dir
    rel = config.handler
    path = os.path.normpath(os.path.join(bundle_dir, rel))
    real_bundle = os.path.realpath(bundle_dir)
    if (
        os.path.isabs(rel)
        or not os.path.realpath(path).startswith(real_bundle + os.sep)
        or not os.path.isfile(path)
    ):
        return _Failure(
            "handler_error",
            trace=f"Handler file not found: {rel}\n",
            detail=f"handler {rel!r} is not a file inside {bundle_dir!r}",
        )
    return None


def _relocate(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` (and the functions and classes it defines) as if compiled from ``path``: the host compiled
    it from the bundle's real path, the child may reach the bundle under another (``/proc/self/fd/N``).
    """
    consts = tuple(_relocate(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def _handler_code(path: str, code: bytes | None) -> types.CodeType:
    if code is not None:  # compiled once by the host (see the host's bytecode.py)
        return _relocate(marshal.loads(code), path)
    with open(path, "rb") as f:
        source = f.read()
    return compile(source, path, "exec", dont_inherit=True)


def _load_handler(
    bundle_path: str, rel: str, scrub: traces.Scrubber, code: bytes | None = None, keep: bool = False
):
    path = os.path.normpath(os.path.join(bundle_path, rel))
    module = types.ModuleType(HANDLER_MODULE)
    module.__file__ = path
    sys.modules[HANDLER_MODULE] = module  # dataclasses and pickling look classes up by module name
    if keep:
        _handlers.pop(rel, None)
    try:
        exec(_handler_code(path, code), module.__dict__)
    except MemoryError:
        raise
    except BaseException as exc:
        raise _Failure("handler_error", traces.tenant_trace(exc, scrub), traces.full_trace(exc)) from None
    handle = getattr(module, "handle", None)
    if not callable(handle):
        raise _Failure(
            "handler_error",
            trace=f"{rel} does not define a function handle(request)\n",
            detail=f"no callable handle in {rel!r}",
        )
    if keep:
        _handlers[rel] = (module, handle)
    return handle


def _loaded_handler(rel: str):
    """The handle of a handler this warm worker loaded before, or None."""
    loaded = _handlers.get(rel)
    if loaded is None:
        return None
    sys.modules[HANDLER_MODULE] = loaded[0]
    return loaded[1]


def _is_disk_limit(exc: BaseException) -> bool:
    """The scratch space is full (ENOSPC, EDQUOT) or a file hit RLIMIT_FSIZE (EFBIG)."""
    return isinstance(exc, OSError) and exc.errno in _DISK_LIMIT_ERRNOS


def _result_frame(value, limits: dict[str, int], rel: str) -> bytes:
    status = 200
    if isinstance(value, tuple):
        if len(value) != 2:
            raise _Failure(
                "handler_error",
                trace=f"handle() in {rel} returned a tuple of {len(value)} "
                "items; return value or (value, status)\n",
            )
        value, status = value
    if type(status) is not int or not 100 <= status <= 599:
        raise _Failure(
            "handler_error",
            trace=f"handle() in {rel} returned an invalid status {status!r:.40}; "
            "use an int between 100 and 599\n",
        )
    try:
        body = protocol.dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise _Failure(
            "handler_error",
            trace=f"{type(exc).__name__}: {exc}\n(in the value returned by handle() in {rel})\n",
        ) from None
    if len(body) > limits["max_response_bytes"]:
        raise _Failure("output_too_large", detail=f"{len(body)} bytes > {limits['max_response_bytes']}")
    return protocol.encode_result(status, body, _peak_rss_kb())


def _input_frame(questions: dict, limits: dict[str, int], rel: str) -> bytes:
    try:
        body = protocol.dumps(questions)
    except (TypeError, ValueError, RecursionError) as exc:
        raise _Failure(
            "handler_error", trace=f"{type(exc).__name__}: {exc}\n(in the questions asked by {rel})\n"
        ) from None
    if len(body) > limits["max_response_bytes"]:
        raise _Failure(
            "output_too_large", detail=f"questions of {len(body)} bytes > {limits['max_response_bytes']}"
        )
    return protocol.encode_input_required(body, _peak_rss_kb())


def _error_frame(status: int, message: object) -> bytes:
    return protocol.encode_result(status, protocol.dumps({"error": str(message)}), _peak_rss_kb())


def _peak_rss_kb() -> int:
    """Peak resident memory (KiB on Linux): the host recycles a warm worker that grew too much."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _scrubber(bundle_path: str, config: protocol.CallConfig) -> traces.Scrubber:
    key = (bundle_path, config.bundle_dir, config.scratch_dir)
    scrub = _scrubbers.get(key)
    if scrub is None:
        hidden = {
            config.bundle_dir: ".",
            os.path.realpath(config.bundle_dir): ".",
            config.scratch_dir: ".",
            RUNTIME_DIR: "<platform>",
        }
        scrub = _scrubbers[key] = traces.Scrubber(bundle_path, hidden)
    return scrub


def _invoke(config: protocol.CallConfig, code: bytes | None, request_data: dict, bundle_path: str) -> bytes:
    """Run the handler and build the frame that answers the host."""
    scrub = _scrubber(bundle_path, config)
    sys.path[:] = [bundle_path, *_stdlib_path]
    sys.modules["platform_sdk"] = sdk
    handle = _loaded_handler(config.handler) if config.reuse else None
    if handle is None:
        handle = _load_handler(bundle_path, config.handler, scrub, code, keep=config.worker)
    channel = _Channel(PROTO_FD)
    request = sdk.Request(request_data, channel.call, channel.notify)
    try:
        value = handle(request)
        request._notices.flush()  # the last progress held back by the interval goes before the result
    except MemoryError:
        raise
    except sdk.UserError as exc:
        if type(exc.status) is not int or not 400 <= exc.status <= 599:
            raise _Failure(
                "handler_error",
                trace=f"UserError status must be an int between 400 and 599, got {exc.status!r:.40}\n",
            ) from None
        return _error_frame(exc.status, exc.message)
    except sdk.RecordsError as exc:
        return _error_frame(exc.response_status(), exc.message)
    except sdk.InputRequired as exc:
        request._notices.flush()
        return _input_frame(exc.questions, config.limits, config.handler)
    except BaseException as exc:
        kind = "handler_resource_limit" if _is_disk_limit(exc) else "handler_error"
        raise _Failure(kind, traces.tenant_trace(exc, scrub), traces.full_trace(exc)) from None
    return _result_frame(value, config.limits, config.handler)


def _flush() -> None:
    for stream in _log_streams:
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # the handler closed or replaced it; nothing left to save


def _serve(
    config: protocol.CallConfig,
    code: bytes | None,
    bundle_path: str,
    handler_problem: "_Failure | None",
    payload: bytes | None = None,
) -> int:
    if payload is None:
        payload = protocol.read_frame(PROTO_FD, config.limits["max_request_bytes"] + 1024)
    if payload is None:
        return EXIT_INTERNAL  # the host gave up before sending the request
    request_data = protocol.decode_request(payload)
    try:
        if handler_problem is not None:
            raise handler_problem
        frame = _invoke(config, code, request_data, bundle_path)
    except _Failure as failure:
        frame = protocol.Failure(failure.kind, failure.trace, failure.detail).encode()
    except MemoryError:
        frame = None  # leave the except block first so the handler's frames are freed
    if frame is None:
        frame = protocol.Failure("handler_resource_limit", detail="MemoryError").encode()
    # Logs first, result last: once the host has the result, everything the handler printed is in the pipe.
    _flush()
    protocol.write_frame(PROTO_FD, frame)
    return EXIT_OK


def _report_internal(exc: BaseException) -> None:
    if not _proto_ready:
        return
    try:
        protocol.write_frame(
            PROTO_FD, protocol.Failure("sandbox_unavailable", detail=traces.full_trace(exc)).encode()
        )
    except (OSError, ValueError):
        pass  # the host is gone; the exit code still tells the zygote


_WARM_UP_SOURCE = "def handle(request):\n    return {'ok': True, 'echo': request.body}\n"


PRIMING_RUNS = 64  # CPython quickens a code object after 8 runs and specialises its instructions later


def prime() -> None:
    """Run the call's code path in the zygote, on dummy data, until CPython has done its lazy work there:
    quickened and specialised bytecode, the type attribute cache, interned names. Every child then inherits
    that work instead of redoing it, and copying each page it writes (copy-on-write), itself.
    """
    for _ in range(PRIMING_RUNS):
        _warm_up()
        if _prctl is not None:
            _prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)  # a ctypes call (as each child makes) that changes nothing


def _warm_up() -> None:
    """Walk the call's own code path once on dummy data while the spare waits: the pages it writes
    (reference counts, allocator arenas) are copied from the zygote now, not on the call's path. Runs
    nothing of a tenant. The call gets its code compiled by the host, so the spare does not compile either.
    """
    config = protocol.CallConfig.decode(protocol.CallConfig(RUNTIME_DIR, "x.py", RUNTIME_DIR, {}).encode())
    traces.Scrubber(RUNTIME_DIR, {config.bundle_dir: ".", RUNTIME_DIR: "<platform>"})
    module = types.ModuleType(HANDLER_MODULE)
    exec(_handler_code("<warm-up>", _warm_up_code), module.__dict__)
    value = module.handle(sdk.Request(protocol.decode_request(b'{"method": "POST", "body": {"n": 1}}'), None))
    _result_frame(value, {"max_response_bytes": 1 << 20}, "x.py")
    os.path.isfile(os.path.realpath(os.path.join(RUNTIME_DIR, "child.py")))


class _CallReader:
    """A warm worker's reads of its next call. The host writes a call's frames (config, code, request) at
    once and nothing more until the child answers or asks, so one read usually takes them all, and what is
    buffered never outlives the call's frames (data call replies are read by ``_Channel`` as before).
    """

    def __init__(self, fd: int):
        self._fd = fd
        self._buffer = bytearray()

    def _fill(self, size: int) -> bool:
        while len(self._buffer) < size:
            chunk = os.read(self._fd, max(size - len(self._buffer), 1 << 16))
            if not chunk:
                return False
            self._buffer += chunk
        return True

    def frame(self, limit: int) -> bytes | None:
        """The next frame's payload; None at end of file before a frame.

        Raises:
            FrameTooLarge: the header announces more than ``limit`` bytes.
            EOFError: the stream ended inside a frame.
        """
        if not self._fill(protocol.HEADER.size):
            if self._buffer:
                raise EOFError("stream ended inside a frame")
            return None
        (size,) = protocol.HEADER.unpack_from(self._buffer)
        if size > limit:
            raise protocol.FrameTooLarge(size, limit)
        if not self._fill(protocol.HEADER.size + size):
            raise EOFError("stream ended inside a frame")
        payload = bytes(self._buffer[protocol.HEADER.size : protocol.HEADER.size + size])
        del self._buffer[: protocol.HEADER.size + size]
        return payload


def _serve_more(first: protocol.CallConfig, bundle_path: str) -> int:
    """A warm worker, after its first call: answer the next calls of the same app version, one at a time,
    until the host closes the socket. Each call's config comes from the host (its handler, whether code
    follows); the confinement applied for the first call (bundle, scratch dir, uid, limits) stays.
    """
    reader = _CallReader(PROTO_FD)
    configs: dict[bytes, protocol.CallConfig] = {}  # the host sends a loaded handler's config unchanged
    request_limit = first.limits["max_request_bytes"] + 1024
    while True:
        payload = reader.frame(protocol.MAX_CALL_CONFIG)
        if payload is None:
            return EXIT_OK  # the host retired this worker
        config = configs.get(payload)
        if config is None:
            sent = protocol.CallConfig.decode(payload)
            config = protocol.CallConfig(
                first.bundle_dir, sent.handler, first.scratch_dir, first.limits, sent.code, True, sent.reuse
            )
            if sent.reuse and len(configs) < 256:
                configs[payload] = config
        code = reader.frame(protocol.MAX_CODE_BYTES) if config.code else None
        request = reader.frame(request_limit)
        if request is None:
            return EXIT_OK
        _serve(config, code, bundle_path, None, request)


def _await_call() -> tuple[protocol.CallConfig, bytes | None]:
    """Block until the host sends this spare its call: the first frame on the protocol socket, written by
    the host before any tenant code can reach the socket (so it is trusted). Returns it and the handler's
    compiled code, which follows in a frame of its own when the host has it.
    """
    payload = protocol.read_frame(PROTO_FD, protocol.MAX_CALL_CONFIG)
    if payload is None:
        os._exit(EXIT_OK)  # the sandbox closed (or dropped this spare) before using it
    config = protocol.CallConfig.decode(payload)
    code = protocol.read_frame(PROTO_FD, protocol.MAX_CODE_BYTES) if config.code else None
    return config, code


def main(spare: protocol.Spawn, proto_fd: int, log_fd: int) -> None:
    """Entry point right after ``fork()`` in the zygote. Never returns.

    The child is made ahead of its call (a *spare*, bound to the call slot's uid in ``spare.uid``): it
    applies what no call changes, then waits for the call's config, then confines itself for that call.
    """
    code = EXIT_INTERNAL
    try:
        _become_child(proto_fd, log_fd)
        hardening.prepare_spare()
        if spare.warm:  # made ahead of its call: time to spare
            _warm_up()
        config, handler_code = _await_call()
        handler_problem = _check_handler_path(config)  # with full access still, before hardening
        bundle_path, keep = hardening.harden(config.limits, config.bundle_dir, config.scratch_dir, spare.uid)
        # Everything the zygote held (its control socket, other calls' pipes, Landlock's path fds) goes now.
        hardening.close_fds_above(PROTO_FD + 1, keep)
        code = _serve(config, handler_code, bundle_path, handler_problem)
        if config.worker and handler_problem is None:
            code = _serve_more(config, bundle_path)
    except MemoryError:
        code = EXIT_NO_MEMORY
    except BaseException as exc:  # last resort in a process about to _exit: report it as a platform fault
        code = EXIT_INTERNAL
        _report_internal(exc)
    finally:
        _flush()
        os._exit(code)
