"""Judging a call: a Transcript becomes an Outcome, or a HandlerFailed logged under its error id."""

import logging
import signal

from core.storable import storable_text

from .exceptions import HandlerFailed
from .exchange import Transcript
from .invocation import Invocation, Outcome
from .runtime import protocol

logger = logging.getLogger("apps_runtime.sandbox")

# Every response carries a JSON body: statuses that cannot have one (1xx, 204, 205, 304) would corrupt the
# HTTP connection of the front end.
_BODILESS_STATUSES = frozenset({204, 205, 304})
# Deaths that mean "a limit was hit": SIGKILL without our timeout is the hard CPU limit or the OOM killer,
# SIGSEGV is what CPython does when an allocation fails where it cannot raise MemoryError.
_LIMIT_SIGNALS = frozenset({signal.SIGXCPU, signal.SIGKILL, signal.SIGSEGV, signal.SIGXFSZ, signal.SIGBUS})


def _logs(t: Transcript) -> str:
    text = t.log.decode("utf-8", errors="replace")
    if t.log_dropped:
        text += f"\n[log truncated: {t.log_dropped} more bytes dropped]\n"
    return text


def _fail(
    kind: str,
    invocation: Invocation,
    t: Transcript,
    *,
    trace: str = "",
    detail: str = "",
    level: int | None = None,
) -> HandlerFailed:
    # The trace and the detail hold the handler's own exception message: escaped once here, they can
    # be logged, stored and sent between processes whatever the handler put in it (a lone surrogate).
    trace, detail = storable_text(trace), storable_text(detail)
    failure = HandlerFailed(kind, trace=trace, logs=_logs(t))
    if level is None:
        level = logging.ERROR if kind == "sandbox_unavailable" or t.zygote_hung else logging.WARNING
    logger.log(
        level,
        "Handler failed: error_id=%s kind=%s tenant=%s bundle=%s handler=%s duration_ms=%.1f data_calls=%d "
        "exit=%s\n%s",
        failure.error_id,
        kind,
        invocation.tenant_key,
        invocation.bundle_dir,
        invocation.handler,
        t.duration_ms,
        t.data_calls,
        t.exit,
        detail or trace,
        extra={"error_id": failure.error_id, "handler_failure": kind},
    )
    return failure


def _from_exit(invocation: Invocation, t: Transcript) -> HandlerFailed:
    report = t.exit
    if type(report) is protocol.ForkFailed:
        return _fail("sandbox_unavailable", invocation, t, detail=f"fork failed: {report.error}")
    if report.timed_out:
        detail = f"killed after {invocation.limits.timeout_ms} ms"
        return _fail("handler_timeout", invocation, t, detail=detail)
    code = report.exitcode
    if code < 0 and -code in _LIMIT_SIGNALS:
        detail = f"killed by {signal.Signals(-code).name}"
        return _fail("handler_resource_limit", invocation, t, detail=detail)
    if code == protocol.EXIT_NO_MEMORY:
        return _fail("handler_resource_limit", invocation, t, detail="out of memory before reporting")
    return _fail("handler_error", invocation, t, detail=f"exited with code {code} without a result")


def unavailable(invocation: Invocation, detail: str) -> HandlerFailed:
    """The failure for a call that could not be run at all (e.g. the zygote does not start)."""
    return _fail("sandbox_unavailable", invocation, Transcript(), detail=detail)


def queue_timeout(invocation: Invocation, detail: str) -> HandlerFailed:
    """The failure for a call that waited too long for its tenant's fair share (HTTP 503)."""
    return _fail("sandbox_unavailable", invocation, Transcript(), detail=detail, level=logging.WARNING)


def handler_status_allowed(status: object) -> bool:
    """A status a handler may answer with: an int from 200 to 599 that allows a body."""
    return type(status) is int and 200 <= status <= 599 and status not in _BODILESS_STATUSES


def _from_final(invocation: Invocation, t: Transcript) -> Outcome:
    final = t.final
    if type(final) is protocol.Result:
        status = final.status
        if handler_status_allowed(status):
            return Outcome(
                status=status, body=final.body, logs=_logs(t), duration_ms=t.duration_ms, asks=final.asks
            )
        trace = (
            f"handle() answered with status {status!r:.40}; use an int from 200 to 599 other than 204, "
            "205 and 304 (every response carries a JSON body)\n"
        )
        raise _fail("handler_error", invocation, t, trace=trace, detail=f"invalid status {status!r:.40}")
    kind, detail = final.kind, final.detail
    if kind not in protocol.CHILD_FAILURE_KINDS:
        detail = f"the child reported kind {kind!r:.60}, which only the host decides\n{detail}"
        kind = "handler_error"
    raise _fail(kind, invocation, t, trace=final.trace, detail=detail)


def judge(invocation: Invocation, t: Transcript) -> Outcome:
    """Turn a transcript into the handler's Outcome.

    Raises:
        HandlerFailed: the handler did not produce a response.
    """
    if t.final is not None:
        return _from_final(invocation, t)
    if t.violation == "output_too_large":
        raise _fail("output_too_large", invocation, t, detail=t.violation_detail)
    if t.violation == "too_deep":
        trace = f"The response or a records call nests JSON deeper than {protocol.MAX_VALUE_DEPTH} levels.\n"
        raise _fail("handler_error", invocation, t, trace=trace, detail=f"frame {t.violation_detail}")
    if t.violation is not None:
        raise _fail("handler_error", invocation, t, detail=f"protocol violation: {t.violation_detail}")
    if t.zygote_hung:
        raise _fail("handler_timeout", invocation, t, detail="no exit report by the backstop; zygote killed")
    if t.exit is not None:
        raise _from_exit(invocation, t)
    raise _fail("sandbox_unavailable", invocation, t, detail="the zygote died during the call")
