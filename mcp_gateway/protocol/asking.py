"""A handler's questions (``request.ask``) put to the caller's client, in both protocol eras.

The handler runs; when it asks, the call's answer is its checked questions (``tools.asks.Asked``).

- A 2026-07-28 client gets an ``InputRequiredResult`` with them as ``inputRequests`` and a sealed
  ``requestState`` carrying the answers of the earlier rounds (``elicitation.ask_state``: bound by
  the SDK's boundary to the caller, the tool and its arguments); it retries the call with its
  ``inputResponses``, and the handler runs again with every answer so far.
- A handshake-era session gets each question as a server request on the call's own stream
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``), waited for on the loop at
  most ``MCP_CONFIRM_SECONDS``; the handler runs again with the answers, in the same call.

Either way a call has at most ``MAX_ROUNDS`` rounds, and a question the client did not declare it
can answer is never sent: a 2026-07-28 request is refused with -32021 (the revision's
``MissingRequiredClientCapability``, naming what is missing), a handshake-era call gets an error
result saying so.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
from django.conf import settings
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.elicitation import ask_state, carried_answers
from mcp_gateway.protocol.log_levels import session_id
from mcp_gateway.tools import calls as tool_calls
from mcp_gateway.tools import prompts
from mcp_gateway.tools.asks import (
    MAX_ANSWERS_BYTES,
    MAX_ROUNDS,
    Asked,
    answer_json,
    checked_answers,
    kinds_declared,
    missing_capabilities,
)
from mcp_gateway.tools.call_context import CallContext
from mcp_gateway.tools.confirmation import Confirmation
from mcp_gateway.tools.results import error_result

MAX_SESSIONS = 10_000
_RESULT_TYPES: dict[str, Any] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}
_session_kinds: OrderedDict[str, tuple[str, ...]] = OrderedDict()


async def call_asking(
    ctx: ServerRequestContext,
    call: CallContext,
    params: types.CallToolRequestParams,
    confirmation: Confirmation | None,
) -> types.CallToolResult | types.InputRequiredResult:
    """``tools/call``, with the rounds of questions its handler asks (see the module docstring)."""
    declared = ctx.session.client_capabilities
    run = functools.partial(tool_calls.run_call, call, params.name, params.arguments, confirmation)
    if call.modern:
        return await _modern_round(call, params, run, declared, confirmation)  # refusals: isError
    return await _on_stream(ctx, run, declared)


async def prompt_asking(
    ctx: ServerRequestContext, call: CallContext, params: types.GetPromptRequestParams
) -> types.GetPromptResult | types.InputRequiredResult:
    """``prompts/get``, with the rounds of questions a route prompt's handler asks: input-required
    rounds for a 2026-07-28 client; a handshake-era ``prompts/get`` has no stream to ask on."""
    declared = ctx.session.client_capabilities
    modern = call.modern
    # A handshake-era prompts/get has no stream to ask on: its handler may not ask.
    run = functools.partial(
        prompts.get_prompt, call if modern else call.replace(can_ask=()), params.name, params.arguments
    )
    if modern:
        return await _modern_round(call, params, run, declared, None, refuse=_refused_prompt)
    outcome = await in_thread(run)
    return (
        _refused_prompt("it asks its caller, which only 2026-07-28 clients answer in prompts/get")
        if isinstance(outcome, Asked)
        else outcome
    )


def _refused_prompt(reason: str) -> types.GetPromptResult:
    raise MCPError(types.INVALID_REQUEST, f"The prompt cannot be made: {reason}.")


async def _modern_round(
    call: CallContext,
    params: types.CallToolRequestParams | types.GetPromptRequestParams,
    run: functools.partial,
    declared: types.ClientCapabilities | None,
    confirmation: Confirmation | None,
    *,
    refuse: Callable[[str], Any] = error_result,
) -> Any:
    given = checked_answers(params.input_responses)  # AnswersRefused: -32602 (protocol.errors)
    carried, rounds = carried_answers(params.request_state, call, params)
    answers = {**given, **carried}  # an answer recorded in an earlier round is not re-answered
    outcome = await in_thread(functools.partial(run, answers=answers))
    if not isinstance(outcome, Asked):
        return outcome
    _refuse_missing(outcome, declared)
    if rounds >= MAX_ROUNDS:
        return refuse(f"The handler asked more than {MAX_ROUNDS} rounds of questions; nothing more ran.")
    kept = {key: answer for key, answer in answers.items() if key not in outcome.requests}
    if _size(kept) > MAX_ANSWERS_BYTES:
        raise MCPError(
            types.INVALID_PARAMS, f"inputResponses: over {MAX_ANSWERS_BYTES:,} bytes in all rounds"
        )
    accepted = confirmation is not None and confirmation.accepted
    state = ask_state(call, params, kept, rounds=rounds + 1, confirmed=accepted)
    return types.InputRequiredResult(input_requests=outcome.requests, request_state=state)


def _refuse_missing(asked: Asked, declared: types.ClientCapabilities | None) -> None:
    missing = missing_capabilities(asked, declared)
    if missing is None:
        return
    data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=missing)
    names = ", ".join(sorted(asked.capabilities_needed() - set(kinds_declared(declared))))
    raise MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"The tool asks its caller through {names}, which this request's client capabilities do not declare.",
        data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


async def _on_stream(
    ctx: ServerRequestContext, run: functools.partial, declared: types.ClientCapabilities | None
) -> types.CallToolResult:
    answers: dict[str, dict] = {}
    for _ in range(MAX_ROUNDS):
        outcome = await in_thread(functools.partial(run, answers=answers))
        if not isinstance(outcome, Asked):
            return outcome
        if missing_capabilities(outcome, declared) is not None:
            names = ", ".join(sorted(outcome.capabilities_needed() - set(kinds_declared(declared))))
            return error_result(
                f"The tool asks its caller through {names}, which this client did not declare. "
                "Nothing else ran."
            )
        for key, request in outcome.requests.items():
            answer = await _ask_on_stream(ctx, request)
            if isinstance(answer, types.CallToolResult):
                return answer
            answers[key] = answer
        if _size(answers) > MAX_ANSWERS_BYTES:
            return error_result(f"The client's answers are over {MAX_ANSWERS_BYTES:,} bytes in all.")
    return error_result(f"The tool asked more than {MAX_ROUNDS} rounds of questions; nothing more ran.")


async def _ask_on_stream(
    ctx: ServerRequestContext, request: types.InputRequest
) -> dict | types.CallToolResult:
    """The client's answer to one server request on this call's stream, or the error result to send."""
    if not ctx.session.can_send_request:
        return error_result(
            "The tool asks its caller, and this connection cannot carry the question (no stream)."
        )
    try:
        with anyio.fail_after(settings.MCP_CONFIRM_SECONDS):
            answer = await ctx.session.send_request(
                request,
                _RESULT_TYPES[request.method],
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
    except NoBackChannelError:
        return error_result(
            "The tool asks its caller, and this connection cannot carry the question (no stream)."
        )
    except TimeoutError:
        return error_result("The client did not answer the tool's question in time; nothing more ran.")
    except (MCPError, ValidationError):  # the client refused, or answered with a malformed result
        return error_result("The client did not answer the tool's question; nothing more ran.")
    return answer_json(answer)


def _size(answers: dict[str, dict]) -> int:
    return len(json.dumps(answers, separators=(",", ":")).encode())


class RememberClientKinds:
    """Middleware: which questions each handshake-era session's client answers, for ``needs_stream``.

    Known from ``notifications/initialized`` on (the session's capabilities are committed then), so
    a ``tools/call`` of a client that can answer is served on an event stream, where its handler's
    questions can travel.
    """

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        session = session_id(ctx)
        if session is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            kinds = kinds_declared(ctx.session.client_capabilities)
            if _session_kinds.get(session) != kinds:
                _session_kinds[session] = kinds
                while len(_session_kinds) > MAX_SESSIONS:
                    _session_kinds.popitem(last=False)
        return await call_next(ctx)


def session_can_answer(session: str | None) -> bool:
    """Whether the handshake-era ``session``'s client declared it answers any question."""
    return bool(_session_kinds.get(session)) if session is not None else False
