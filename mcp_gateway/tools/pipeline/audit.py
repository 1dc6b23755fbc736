"""The audit of one call the tools layer serves: one row, however the call ends.

The record and how its row is committed before the call is answered are ``mcp_gateway.audit_log``'s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core import tracing
from core.error_ids import new_error_id
from core.metrics import REFUSED_TOOL, record_tool_call
from mcp_gateway.audit_log import AuditRecord, Outcome, record_call
from mcp_gateway.exceptions import InternalError, RouteAnswerRefused, Unavailable
from mcp_gateway.tools.pipeline.call_context import CallContext

logger = logging.getLogger("mcp_gateway.tools.pipeline.audit")


@contextmanager
def audited_call(
    call: CallContext, name: str, arguments: Any, *, method: str = "tools/call"
) -> Iterator[AuditRecord]:
    """One audit row for the tools/call (or ``method``: resources/read, prompts/get...) in the block,
    however it ends.

    The block fills in the yielded record (``ran``, ``refused``, ``ended``...) as the call goes, so
    a call that raises half-way is still audited with what was known.

    Raises:
        Unavailable: as raised in the block (audited ``denied``).
        RouteAnswerRefused: as raised in the block, audited with the outcome the block set.
        InternalError: anything else raised in the block: logged under the error id, audited
            ``platform_error``; the caller gets the id, never the exception.
    """
    started = time.perf_counter()
    audit = AuditRecord()
    try:
        yield audit
    except Unavailable:
        if audit.outcome == Outcome.PLATFORM_ERROR:  # the block did not say why (invalid arguments)
            audit.refused(Outcome.DENIED)
        raise
    except RouteAnswerRefused:
        raise
    except Exception as err:  # the top of one call
        error_id = new_error_id()
        logger.exception("Tool call failed: error_id=%s tenant=%s tool=%s", error_id, call.tenant.slug, name)
        audit.platform_failed(error_id)
        raise InternalError(error_id) from err
    finally:
        if audit.recorded:  # not a call that only asked for the user's yes
            _write(call, name, arguments, method, time.perf_counter() - started, audit)


def _write(
    call: CallContext, name: str, arguments: Any, method: str, seconds: float, audit: AuditRecord
) -> None:
    assert audit.outcome is not None  # noqa: S101 -- recorded
    if audit.app_name:  # the request's span learns which app served it
        tracing.annotate({"lcp.app": audit.app_name, "lcp.app.version": audit.app_version or 0})
    record_call(
        call.caller,
        name,
        arguments,
        outcome=audit.outcome,
        duration_ms=seconds * 1000,
        app_name=audit.app_name,
        app_version=audit.app_version,
        error_id=audit.error_id,
        method=method,
        trace_id=call.trace_id,
        call_id=audit.call_id,
        parent_call_id=call.parent_call_id,
    )
    if method == "tools/call":
        # A refused call may name any tool at all: its name is not a label (core.metrics says why).
        tool = REFUSED_TOOL if audit.outcome == Outcome.DENIED else name
        record_tool_call(call.tenant.slug, tool, audit.outcome, seconds)
