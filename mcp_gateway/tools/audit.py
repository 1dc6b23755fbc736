"""Writing the audit row of a tool call: committed before the call is answered.

The rule is "every answered call has its audit row committed": ``record_call`` returns only once
the row is committed (or, inside a caller's transaction, written in it), and the call is answered
after it returns, so a crash can lose only rows of calls nobody got an answer for.

Rows of concurrent calls are committed together (group commit, ``GroupCommit``): a call whose row
finds no commit in progress writes it, with every row queued meanwhile, in one multi-row INSERT and
one transaction; a call whose row finds one in progress waits (at most ``MAX_PENDING`` rows queue;
past that a call waits for room) and is woken when its row is committed, or to lead the next batch.
No extra thread: a call alone commits its own row at once, as before. Measured on SQLite (issue
28): a row written in a transaction of 8 costs about half the CPU of a row committed alone (48 against
90 us) and a fifth of the wall time; end to end, 16 clients calling ``records_get`` spent the same
server CPU a call either way (2.31 against 2.22 ms, within the run's noise), since the rows mostly
found no commit in progress. A batch the database refuses is written again row by row, so only the
call whose row is refused fails.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DatabaseError, connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field

from core.error_ids import new_error_id
from core.metrics import REFUSED_TOOL, record_tool_call
from mcp_gateway.exceptions import InternalError, RouteAnswerRefused, Unavailable
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.tools.call_context import CallContext
from tenants.callers import Caller

_UNSET = object()
_PLAIN = frozenset({str, int, float, type(None)})


def arguments_hash(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # A lone surrogate is valid JSON text a caller may send; hash it rather than fail the call.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


logger = logging.getLogger("mcp_gateway.tools.audit")
Outcome = ToolCallAudit.Outcome


@contextmanager
def audited_call(
    call: CallContext, name: str, arguments: Any, *, method: str = "tools/call"
) -> Iterator[dict[str, Any]]:
    """One audit row for the tools/call (or ``method``: resources/read, prompts/get...) in the block,
    however it ends.

    The block fills in the yielded dict (``outcome``, ``app_name``...) as the call goes, so a call
    that raises half-way is still audited with what was known.

    Raises:
        Unavailable: as raised in the block (audited ``denied``).
        RouteAnswerRefused: as raised in the block, audited with the outcome the block set.
        InternalError: anything else raised in the block: logged under the error id, audited
            ``platform_error``; the caller gets the id, never the exception.
    """
    started = time.perf_counter()
    audit: dict[str, Any] = {"outcome": Outcome.PLATFORM_ERROR}
    try:
        yield audit
    except Unavailable:
        if audit["outcome"] == Outcome.PLATFORM_ERROR:  # the block did not say why (invalid arguments)
            audit["outcome"] = Outcome.DENIED
        raise
    except RouteAnswerRefused:
        raise
    except Exception as err:  # the top of one call
        error_id = new_error_id()
        logger.exception("Tool call failed: error_id=%s tenant=%s tool=%s", error_id, call.tenant.slug, name)
        audit.update(outcome=Outcome.PLATFORM_ERROR, error_id=error_id)
        raise InternalError(error_id) from err
    finally:
        # None: the call only asked for the user's yes; the call that carries the answer is audited.
        if audit["outcome"] is not None:
            _audit(call, name, arguments, method, time.perf_counter() - started, audit)


def _audit(call: CallContext, name: str, arguments: Any, method: str, seconds: float, audit: dict) -> None:
    record_call(
        call.caller,
        name,
        arguments,
        duration_ms=seconds * 1000,
        method=method,
        trace_id=call.trace_id,
        **audit,
    )
    if method == "tools/call":
        # A refused call may name any tool at all: its name is not a label (core.metrics says why).
        tool = REFUSED_TOOL if audit["outcome"] == Outcome.DENIED else name
        record_tool_call(call.tenant.slug, tool, audit["outcome"], seconds)


def record_call(
    caller: Caller,
    wire_name: str,
    arguments: Any,
    *,
    outcome: str,
    duration_ms: float,
    app_name: str = "",
    app_version: int | None = None,
    error_id: str = "",
    method: str = "tools/call",
    trace_id: str = "",
) -> None:
    """Write the call's audit row; outside a transaction it is committed when this returns.

    Raises:
        DatabaseError: the row could not be written; the call must not be answered as done.
    """
    values = {
        "tenant_id": caller.tenant_id,
        "user_id": caller.user_id,
        "token_id": caller.token_id,
        "oauth_client_id": caller.oauth_client_id or "",
        "agent_name": caller.agent_name or "",
        "agent_run_id": caller.agent_run_id or "",
        "wire_name": wire_name,
        "app_name": app_name,
        "app_version": app_version,
        "outcome": outcome,
        "duration_ms": round(duration_ms, 3),
        "error_id": error_id,
        "arguments_sha256": arguments_hash(arguments),
        "method": method,
        "trace_id": trace_id,
    }
    connection = connections[router.db_for_write(ToolCallAudit)]
    if connection.in_atomic_block or not connection.get_autocommit():
        _insert(connection, [values])  # in the caller's transaction: commits or rolls back with it
    else:  # autocommit: each INSERT of ``group_commit`` is committed when it returns
        group_commit.write(connection, values)


class _Row:
    """One queued row and the call waiting for it."""

    __slots__ = ("error", "lead", "ready", "values")

    def __init__(self, values: dict[str, Any]):
        self.values = values
        self.ready = threading.Event()
        self.lead = False  # woken to write the next batch, not because its row is committed
        self.error: DatabaseError | None = None


class GroupCommit:
    """Rows of concurrent calls committed together; each ``write`` returns once its row is committed.

    Bounded: at most ``max_pending`` rows wait (a call past that waits for room) and a batch holds
    at most ``max_batch`` rows.
    """

    def __init__(self, max_batch: int = 32, max_pending: int = 256):
        self.max_batch = max_batch
        self.max_pending = max_pending
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        self._pending: list[_Row] = []
        self._writing = False

    def write(self, connection: BaseDatabaseWrapper, values: dict[str, Any]) -> None:
        """Commit ``values`` as a row, alone or in a batch with other calls' rows.

        Raises:
            DatabaseError: the database refused the row.
        """
        row = _Row(values)
        with self._room:
            while len(self._pending) >= self.max_pending:
                self._room.wait()
            self._pending.append(row)
            lead = not self._writing
            self._writing = True
        if not lead:
            row.ready.wait()
        if not row.ready.is_set() or row.lead:
            self._lead(connection, row)
        if row.error is not None:
            raise row.error

    def _lead(self, connection: BaseDatabaseWrapper, mine: _Row) -> None:
        """Write batches until ``mine`` is written, then hand the lead to the next queued row."""
        try:
            while True:
                with self._room:
                    batch = self._pending[: self.max_batch]
                    del self._pending[: self.max_batch]
                    self._room.notify_all()
                try:
                    _commit(connection, batch)
                except BaseException:
                    for row in batch:  # not known to be committed: no call of the batch is answered as done
                        row.error = row.error or DatabaseError("the audit batch was not committed")
                    raise
                finally:
                    for row in batch:
                        if row is not mine:
                            row.ready.set()
                if mine in batch:
                    return
        finally:
            with self._room:
                if mine in self._pending:  # left on an error before its batch: nobody else writes it
                    self._pending.remove(mine)
                if self._pending:
                    following = self._pending[0]
                    following.lead = True
                    following.ready.set()
                else:
                    self._writing = False


def _commit(connection: BaseDatabaseWrapper, batch: list[_Row]) -> None:
    """Commit the batch in one transaction; if the database refuses it, each row in its own, so
    only a refused row carries an error.

    Each is one INSERT statement on a connection in autocommit (``record_call`` sends a caller's
    transaction elsewhere): the statement is its own transaction, all its rows or none, committed
    when it returns. An atomic block around it added a BEGIN, a COMMIT and Django's bookkeeping of
    both, a third of the row's CPU on SQLite.
    """
    try:
        _insert(connection, [row.values for row in batch])
        return
    except DatabaseError as err:
        if len(batch) == 1:
            batch[0].error = err
            return
    for row in batch:
        try:
            _insert(connection, [row.values])
        except DatabaseError as err:
            row.error = err


group_commit = GroupCommit()


def _insert(connection: BaseDatabaseWrapper, rows: list[dict[str, Any]]) -> None:
    """One INSERT of the rows, their values prepared by the fields as ``save()`` prepares them.

    ``save()`` costs a call 0.25 ms of CPU, the statement alone 0.1 ms. Fields not given (the
    creation time, any added later) take their defaults. A plain string, number or None goes as it
    is: the row's char, integer, float and key fields would prepare it into itself.
    """
    sql, fields = _insert_statement(connection.alias, len(rows))
    params = []
    for values in rows:
        for field in fields:
            value = values.get(field.attname, _UNSET)
            if type(value) not in _PLAIN:  # the identity for these, on every field of the row
                value = field.get_db_prep_save(field.get_default() if value is _UNSET else value, connection)
            params.append(value)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@functools.lru_cache(maxsize=64)
def _insert_statement(alias: str, rows: int) -> tuple[str, list[Field]]:
    quote = connections[alias].ops.quote_name
    fields = [field for field in ToolCallAudit._meta.concrete_fields if not field.primary_key]
    columns = ", ".join(quote(field.column) for field in fields)
    placeholders = ", ".join([f"({', '.join(['%s'] * len(fields))})"] * rows)
    return f"INSERT INTO {quote(ToolCallAudit._meta.db_table)} ({columns}) VALUES {placeholders}", fields
