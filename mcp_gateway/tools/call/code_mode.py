"""Code mode: the built-in ``run_code`` runs a caller's Python script in the handler sandbox, and each
``tools.call`` of the script is the caller's own tools/call (docs/code-mode.md).

The script runs in a warm worker of code mode's own kind (``code_runner.py`` as its one handler, no
app's files), keyed by tenant and person, so one person's script never shares interpreter state with
another's. Its data calls come back here (``_Run.broker``) and go through the one pipeline
(``tools.calls.run_call``, passed in as ``inner``: the pipeline imports this module), with the
caller's ``CallContext`` and the ``run_code`` call's audit ``call_id`` as each inner row's parent.

A ``confirm`` tool inside a script: the script stops at that call, and ``run_code`` answers with the
same question (``Asked.confirms``) for the protocol layer (or an agent run's approval) to put; the
answer comes back as ``run_code``'s confirmation and the script runs again from the start, that
answer going to its first inner call that needs one. So calls before it run again: a script should
make its confirm call before anything it must not repeat. One confirm call per run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.types as types
from django.conf import settings
from ulid import ULID

from apps_runtime.handler_contract import LOG, PROGRESS
from apps_runtime.sandbox import BrokerError, HandlerFailed, Invocation, SandboxLimits, get_sandbox
from core.error_ids import error_id_note
from mcp_gateway.audit_log import AuditRecord, Outcome
from mcp_gateway.exceptions import InternalError, Unavailable
from mcp_gateway.tools.call.confirmation import Confirmation
from mcp_gateway.tools.catalog.builtins import RUN_CODE, SEARCH_TOOLS
from mcp_gateway.tools.catalog.catalog import CatalogEntry, catalog_for
from mcp_gateway.tools.catalog.token_estimate import compact_json
from mcp_gateway.tools.pipeline.asks import Asked
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result, json_result

logger = logging.getLogger("mcp_gateway.tools.call.code_mode")

# The pipeline, as the caller: (context, tool name, arguments, confirmation) -> its outcome.
InnerCall = Callable[[CallContext, str, dict, Confirmation | None], types.CallToolResult | Asked]

RUNNER = Path(__file__).with_name("code_runner.py")
HANDLER = "run.py"
CALL, SEARCH = "tools.call", "tools.search"
STOPPED = "The script stopped: it waits for the user's confirmation."
ONE_CONFIRM = "A script may make one call that needs the user's confirmation per run; this is a second."
ASKS_INPUT = "The tool asked its caller for input, which a run_code script cannot carry."
NO_RECURSION = "run_code cannot call run_code."


def not_a_plain_builtin(*_args: Any, **_client: Any) -> Any:
    """``BUILTINS["run_code"]``'s handler: run_code needs its call's context (``run_code`` below)."""
    raise RuntimeError("run_code is run by tools.calls with its call's context")


@dataclass
class _Run:
    """One run of a script: the inner calls it made, and the question it stopped at, if any."""

    call: CallContext
    inner: InnerCall
    confirmation: Confirmation | None
    calls: list[dict] = field(default_factory=list)
    asked: Asked | None = None
    confirmation_used: bool = False
    parent_id: str = ""  # the run_code call's audit call_id

    def broker(self, op: str, args: dict) -> Any:
        if op in (PROGRESS, LOG):
            return None  # a script has no progress or log lines to send
        if op not in (CALL, SEARCH):
            raise BrokerError("invalid", f"unknown operation '{op}'")
        if self.asked is not None:
            raise BrokerError("invalid", STOPPED)
        if len(self.calls) >= settings.CODE_MODE_MAX_CALLS:
            raise BrokerError("limit", f"more than {settings.CODE_MODE_MAX_CALLS} tool calls in one run")
        if op == SEARCH:
            return self._search(args)
        name, arguments = args.get("name"), args.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise BrokerError("invalid", "tools.call(name, arguments): a tool name and a dict (or None)")
        entry = catalog_for(self.call.tenant).by_name.get(name)
        if entry is not None and entry.builtin == RUN_CODE:
            raise BrokerError("invalid", NO_RECURSION)
        return self._call(name, arguments or {})

    def _call(self, name: str, arguments: dict) -> Any:
        started = time.perf_counter()
        outcome: str = Outcome.PLATFORM_ERROR
        result: types.CallToolResult | Asked | None = None
        try:
            result = self._run(name, arguments)
        except Unavailable as err:
            outcome = Outcome.DENIED
            raise BrokerError("permission_denied", str(err)) from err
        except InternalError as err:
            raise BrokerError("invalid", str(err)) from err
        else:
            outcome = _outcome_of(result)
        finally:
            self.calls.append(
                {"tool": name, "outcome": outcome, "ms": round((time.perf_counter() - started) * 1000, 1)}
            )
        if isinstance(result, Asked):
            raise BrokerError(
                "invalid",
                STOPPED if self.asked is result else (ONE_CONFIRM if result.confirms else ASKS_INPUT),
            )
        if result.is_error:
            raise BrokerError("invalid", _text(result))
        return result.structured_content if result.structured_content is not None else _text(result)

    def _run(self, name: str, arguments: dict) -> types.CallToolResult | Asked:
        # Nobody is asked in a script's call (but its one confirmation): answers come back as results.
        context = self.call.replace(parent_call_id=self.parent_id, can_ask=(), can_ask_url=False, events=None)
        result = self.inner(context, name, arguments, None)
        if isinstance(result, Asked) and result.confirms and not self.confirmation_used:
            if self.confirmation is None:
                self.asked = result  # the script stops here; run_code puts the question
                return result
            self.confirmation_used = True
            result = self.inner(context, name, arguments, self.confirmation)
        return result

    def _search(self, args: dict) -> list[dict]:
        wire = next(e.wire_name for e in catalog_for(self.call.tenant).entries if e.builtin == SEARCH_TOOLS)
        limit = args.get("limit", 5)
        found = self._call(wire, {"query": args.get("query"), "limit": limit})
        return [
            {
                k: tool.get(k)
                for k in ("name", "title", "description", "inputSchema", "outputSchema")
                if k in tool
            }
            for tool in found.get("tools", [])
            if isinstance(tool, dict)
        ]


def _outcome_of(result: types.CallToolResult | Asked) -> str:
    if isinstance(result, Asked):
        return Outcome.INPUT_REQUIRED
    return Outcome.TOOL_ERROR if result.is_error else Outcome.OK


def _text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def run_code(
    call: CallContext,
    entry: CatalogEntry,
    arguments: dict,
    audit: AuditRecord,
    confirmation: Confirmation | None,
    inner: InnerCall,
) -> types.CallToolResult | Asked:
    """Run the script of ``arguments["code"]`` as ``call``'s caller; its result, or the question a
    ``confirm`` tool inside it asks first (no audit row then: the run that carries the answer has one)."""
    audit.call_id = str(ULID())
    run = _Run(call, inner, confirmation, parent_id=audit.call_id)
    try:
        outcome = get_sandbox().run(_invocation(call, arguments["code"]), run.broker)
    except HandlerFailed as failure:
        return _failed(call, failure, run, audit)
    if run.asked is not None:
        audit.unrecorded()
        return run.asked
    body = outcome.body if isinstance(outcome.body, dict) else {}
    output = body.get("output") if isinstance(body.get("output"), str) else ""
    if "error" in body:
        audit.ended(Outcome.TOOL_ERROR)
        value = {"result": None, "output": output, "calls": run.calls, "error": str(body["error"])}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=compact_json(value))],
            structured_content=value,
            is_error=True,
        )
    value = {"result": body.get("result"), "output": output, "calls": run.calls}
    mapped = json_result(value, budget=entry.output_budget(call.tenant))
    audit.ended(Outcome.TOOL_ERROR if mapped.is_error else Outcome.OK)
    return mapped


def _failed(call: CallContext, failure: HandlerFailed, run: _Run, audit: AuditRecord) -> types.CallToolResult:
    """A script the sandbox stopped (time, memory, a platform fault): said, with an error id."""
    logger.warning(
        "run_code failed (%s): error_id=%s tenant=%s", failure.kind, failure.error_id, call.tenant.slug
    )
    audit.failed(failure.error_id)
    done = f" after {len(run.calls)} tool calls" if run.calls else ""
    if failure.kind == "handler_timeout":
        why = f"The script ran out of time ({settings.CODE_MODE_TIMEOUT_MS} ms){done} and was stopped."
    elif failure.kind == "sandbox_unavailable":
        why = "The script could not be run now; try again."
    else:
        why = f"The script was stopped: {failure.title.lower().replace('the handler', 'it')}{done}."
    return error_result(f"{why} {error_id_note(failure.error_id)}")


def _invocation(call: CallContext, code: str) -> Invocation:
    person = hashlib.sha256(call.caller.person_key.encode()).hexdigest()[:16]
    return Invocation(
        bundle_dir=str(runner_dir()),
        handler=HANDLER,
        request={
            "method": "POST",
            "path": "run_code",
            "body": {"code": code, "max_output": settings.CODE_MODE_MAX_OUTPUT_CHARS},
            "user": call.caller.as_handler_user(),
        },
        limits=SandboxLimits(
            timeout_ms=settings.CODE_MODE_TIMEOUT_MS,
            memory_mb=settings.SANDBOX_MEMORY_MB,
            max_request_bytes=settings.SANDBOX_MAX_REQUEST_BYTES,
            max_response_bytes=settings.SANDBOX_MAX_RESPONSE_BYTES,
            max_log_bytes=settings.SANDBOX_MAX_LOG_BYTES,
            # One more than the cap: the call past it is answered by the broker, which says why.
            max_data_calls=settings.CODE_MODE_MAX_CALLS + 1,
        ),
        # A fair share of its own: a script holds its slot while its inner calls run handlers in the
        # tenant's share, so scripts filling that share would starve their own inner calls.
        tenant_key=f"{call.tenant.pk}:code",
        # Code mode's own kind of warm worker: per tenant and person (a script can change its
        # interpreter's state, which must never reach another person's script).
        warm_key=f"{call.tenant.pk}:code:{person}",
    )


_runner_dir: Path | None = None


def runner_dir() -> Path:
    """The runner's bundle folder under the sandbox's bundle root, written once per runner source."""
    global _runner_dir  # noqa: PLW0603 -- written once per process
    if _runner_dir is not None:
        return _runner_dir
    source = RUNNER.read_bytes()
    target = Path(settings.SANDBOX_BUNDLE_DIR) / f"_code_mode_{hashlib.sha256(source).hexdigest()[:16]}"
    if not (target / HANDLER).is_file():
        target.mkdir(parents=True, exist_ok=True)
        temporary = target / f".{HANDLER}.{os.getpid()}"
        temporary.write_bytes(source)
        os.replace(temporary, target / HANDLER)  # whole or absent: another process may write it too
    _runner_dir = target
    return target
