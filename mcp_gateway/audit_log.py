"""The audit log of MCP calls: one typed record per call, its row committed before the call is answered.

The rule is "every answered call has its audit row committed": ``record_call`` returns only once
the row is committed (or, inside a caller's transaction, written in it), and the call is answered
after it returns, so a crash can lose only rows of calls nobody got an answer for.

A call fills in an ``AuditRecord`` as it goes (``ran``, ``refused``, ``ended``...): typed, so a
misspelt outcome or field fails where it is written, not silently in the row. Rows of concurrent
calls are committed together (group commit, ``GroupCommit``): a call whose row finds no commit in
progress writes it, with every row queued meanwhile, in one multi-row INSERT
and one transaction; a call whose row finds one in progress waits (at most ``max_pending`` rows
queue; past that a call waits for room) and is woken when its row is committed, or to lead the next
batch. No extra thread: a call alone commits its own row at once. Measured on SQLite (issue 28): a
row written in a transaction of 8 costs about half the CPU of a row committed alone and a fifth of
the wall time. A batch the database refuses is written again row by row, so only the call whose
row is refused fails.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connections, router
from django.db.backends.base.base import BaseDatabaseWrapper

from core import tracing
from mcp_gateway.models import ToolCallAudit
from tenants.callers import Caller

Outcome = ToolCallAudit.Outcome


def arguments_hash(arguments: Any) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # A lone surrogate is valid JSON text a caller may send; hash it rather than fail the call.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class AuditRecord:
    """What one call's audit row will say, filled in as the call goes.

    It starts as ``platform_error`` (a call that raises half-way is audited with what was known).
    ``outcome`` None: the call only asked for the user's yes and writes no row (the call that
    carries the answer is audited).
    """

    outcome: str | None = Outcome.PLATFORM_ERROR
    app_name: str = ""
    app_version: int | None = None
    error_id: str = ""
    call_id: str = ""  # set by a call that makes inner calls (run_code): they name it as their parent
    # The call runs on a person's out-of-band approval (``tools.approvals``): an ok is ``confirmed``.
    approved: bool = False

    def app(self, name: str | None) -> None:
        """The call resolved to a tool (or resource, prompt) of app ``name``."""
        self.app_name = name or ""

    def ran(self, app_name: str, version: int) -> None:
        """The app's version that serves the call was loaded."""
        self.app_name, self.app_version = app_name, version

    def refused(self, outcome: str) -> None:
        """Nothing ran: ``invalid_arguments``, ``rate_limited``, ``declined``, ``denied``..."""
        self.outcome = outcome

    def ended(self, outcome: str) -> None:
        """The call ended with ``outcome`` (``ok``, ``tool_error``, ``input_required``...)."""
        self.outcome = outcome

    def failed(self, error_id: str) -> None:
        """The tenant's handler failed, logged under ``error_id``."""
        self.outcome, self.error_id = Outcome.HANDLER_FAILED, error_id

    def platform_failed(self, error_id: str) -> None:
        """The platform failed, logged under ``error_id``."""
        self.outcome, self.error_id = Outcome.PLATFORM_ERROR, error_id

    def unrecorded(self) -> None:
        """The call only asked for the user's yes: no row."""
        self.outcome = None

    @property
    def recorded(self) -> bool:
        return self.outcome is not None


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
    call_id: str = "",
    parent_call_id: str = "",
) -> None:
    """Write the call's audit row; outside a transaction it is committed when this returns.

    Raises:
        DatabaseError: the row could not be written; the call must not be answered as done.
    """
    row = ToolCallAudit(
        tenant_id=caller.tenant_id,
        user_id=caller.user_id,
        token_id=caller.token_id,
        oauth_client_id=caller.oauth_client_id or "",
        agent_name=caller.agent_name or "",
        agent_run_id=caller.agent_run_id or "",
        wire_name=wire_name,
        app_name=app_name,
        app_version=app_version,
        outcome=outcome,
        duration_ms=round(duration_ms, 3),
        error_id=error_id,
        arguments_sha256=arguments_hash(arguments),
        method=method,
        trace_id=trace_id,
        call_id=call_id,
        parent_call_id=parent_call_id,
    )
    connection = connections[router.db_for_write(ToolCallAudit)]
    with tracing.span("audit.write", {"lcp.audit.outcome": outcome}):
        if connection.in_atomic_block or not connection.get_autocommit():
            _insert(connection, [row])  # in the caller's transaction: commits or rolls back with it
        else:  # autocommit: each INSERT of ``group_commit`` is committed when it returns
            group_commit.write(connection, row)


class _Queued:
    """One queued row and the call waiting for it."""

    __slots__ = ("error", "lead", "ready", "row")

    def __init__(self, row: ToolCallAudit):
        self.row = row
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
        self._pending: list[_Queued] = []
        self._writing = False

    def write(self, connection: BaseDatabaseWrapper, row: ToolCallAudit) -> None:
        """Commit ``row``, alone or in a batch with other calls' rows.

        Raises:
            DatabaseError: the database refused the row.
        """
        queued = _Queued(row)
        with self._room:
            while len(self._pending) >= self.max_pending:
                self._room.wait()
            self._pending.append(queued)
            lead = not self._writing
            self._writing = True
        if not lead:
            queued.ready.wait()
        if not queued.ready.is_set() or queued.lead:
            self._lead(connection, queued)
        if queued.error is not None:
            raise queued.error

    def _lead(self, connection: BaseDatabaseWrapper, mine: _Queued) -> None:
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
                    for (
                        queued
                    ) in batch:  # not known to be committed: no call of the batch is answered as done
                        queued.error = queued.error or DatabaseError("the audit batch was not committed")
                    raise
                finally:
                    for queued in batch:
                        if queued is not mine:
                            queued.ready.set()
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


def _commit(connection: BaseDatabaseWrapper, batch: list[_Queued]) -> None:
    """Commit the batch in one transaction; if the database refuses it, each row in its own, so
    only a refused row carries an error."""
    try:
        _insert(connection, [queued.row for queued in batch])
        return
    except DatabaseError as err:
        if len(batch) == 1:
            batch[0].error = err
            return
    for queued in batch:
        try:
            _insert(connection, [queued.row])
        except DatabaseError as err:
            queued.error = err


class _RowInsert:
    """The audit table's multi-row INSERT, its SQL made once per (database, batch size) from the
    model's own fields, so a column added to ``ToolCallAudit`` is written without a change here.

    Not ``bulk_create``: it compiles the statement anew each time, wraps it in an atomic block and
    reads the ids back, none of which a row nobody reads back needs. Measured on SQLite, one row at a
    time in process (bench/bench_audit_insert.py): this costs about half of ``bulk_create``'s CPU a
    row. One statement is all its rows or none, in autocommit as in a caller's transaction.
    """

    def __init__(self) -> None:
        self._fields = [field for field in ToolCallAudit._meta.concrete_fields if not field.primary_key]
        self._sql: dict[tuple[str, int], str] = {}

    def __call__(self, connection: BaseDatabaseWrapper, rows: list[ToolCallAudit]) -> None:
        params = [
            field.get_db_prep_save(field.pre_save(row, add=True), connection)
            for row in rows
            for field in self._fields
        ]
        with connection.cursor() as cursor:
            cursor.execute(self._statement(connection, len(rows)), params)

    def _statement(self, connection: BaseDatabaseWrapper, count: int) -> str:
        key = (connection.alias, count)
        if key not in self._sql:
            quote = connection.ops.quote_name
            columns = ", ".join(quote(field.column) for field in self._fields)
            rows = [["%s"] * len(self._fields)] * count
            # django-stubs types the rows as strings; Django joins each row's placeholders itself.
            values = connection.ops.bulk_insert_sql(self._fields, rows)  # type: ignore[arg-type]
            self._sql[key] = f"INSERT INTO {quote(ToolCallAudit._meta.db_table)} ({columns}) {values}"
        return self._sql[key]


_insert = _RowInsert()


group_commit = GroupCommit()
