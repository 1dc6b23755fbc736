"""Putting a call's questions to its client and resuming the call, in both protocol eras.

The tools layer answers a call with an outcome: a result, or ``tools.asks.Asked``, the questions to
put first. One kind of question is the user's yes to run a tool marked ``confirm`` (``Asked.confirms``,
asked by ``tools.calls.preflight`` before anything runs); the others are a handler's own
(``request.ask``: forms, sampling, roots). This module renders any ``Asked``:

- A 2026-07-28 client gets an ``InputRequiredResult`` with the questions as ``inputRequests`` and a
  ``requestState``; it retries the call with its ``inputResponses`` and that state, and the call runs
  again with every answer so far. The state has one format (``_claims``): the answers of the earlier
  rounds, the round count, whether the user already confirmed the call, and, while a confirmation
  is pending, a nonce. The SDK's ``RequestStateBoundary`` seals it (AES-GCM under a key derived from
  ``SECRET_KEY``), expires it after ``MCP_CONFIRM_SECONDS`` and binds it to the caller; inside the
  seal the gateway repeats that binding (tenant, credential, tool, a digest of the arguments), so a
  retry with another token or other arguments is refused before any handler runs. An answered
  confirmation's nonce is spent in this process, so a replayed retry is asked again, never run again.
- A handshake-era session gets each question as a server request on the call's own stream
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``), waited for on the event loop
  (no worker thread held) at most ``MCP_CONFIRM_SECONDS``; the call runs again with the answers.

A URL-mode question (``Asked.out_of_band``: connect an account, decide an approval) is answered
"accept" when the person agreed to open the page, not when they are done there: the call then waits
(on the event loop, checking every ``URL_POLL_SECONDS``, at most ``MCP_CONFIRM_SECONDS``) until the
step is taken, and runs again. In the handshake era the question is ``elicitation/create`` (mode
"url", an ``elicitationId``) on the call's stream, and ``notifications/elicitation/complete`` tells the
client once the step is taken; a 2026-07-28 client gets it in an input-required result, and its retry
is the request that waits. A question declined or cancelled, or a step not taken in time, answers
what a client without URL mode gets (``OutOfBand.unanswered``: the error result with the link).

Either way a call has at most ``MAX_ROUNDS`` rounds of questions, and a question the
client did not declare it can answer is never sent: a 2026-07-28 request is refused with -32021
(``MissingRequiredClientCapability``, naming what is missing), a handshake-era call gets an error
result saying so. A client that cannot confirm is never asked: the call refuses itself.
"""

from __future__ import annotations

import functools
import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NoReturn

import anyio
import mcp.types as types
from django.conf import settings
from django.utils.crypto import salted_hmac
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_gateway.audit_log import arguments_hash, record_call
from mcp_gateway.exceptions import MissingClientCapability, NotAuthenticated, RequestRefused
from mcp_gateway.models import ToolCallAudit
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import authenticated
from mcp_gateway.protocol.errors import refusal
from mcp_gateway.protocol.log_levels import session_id
from mcp_gateway.tools.call.confirmation import FIELD, Confirmation, Verdict, verdict_of
from mcp_gateway.tools.pipeline.asks import (
    MAX_ANSWERS_BYTES,
    MAX_ROUNDS,
    URL_KEY,
    AnswersRefused,
    Asked,
    OutOfBand,
    answer_json,
    asks_by_url,
    checked_answers,
    kinds_declared,
    missing_capabilities,
)
from mcp_gateway.tools.pipeline.call_context import CallContext
from mcp_gateway.tools.pipeline.results import error_result
from mcp_gateway.tools.pipeline.tracing import traceparent_of
from mcp_gateway.tools.prompts import prompts
from tenants.callers import Caller

logger = logging.getLogger("mcp_gateway.protocol.asking")

AUDIENCE = "lowcode-platform/mcp"
_STATE_VERSION = 2  # one format for every round: confirmation and a handler's questions
# The data of the SDK boundary's one refusal (``request_state._reject``): a frozen wire shape.
_STATE_REFUSED = {"reason": "invalid_request_state"}
MAX_SESSIONS = 10_000
URL_POLL_SECONDS = 1.0  # how often a call waiting for a step taken in the browser looks again
_RESULT_TYPES: dict[str, Any] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}
_session_kinds: OrderedDict[str, tuple[str, ...]] = OrderedDict()
Outcome = ToolCallAudit.Outcome
Params = types.CallToolRequestParams | types.GetPromptRequestParams
# One run of the call in a worker thread: (the user's confirmation, the answers so far) -> outcome.
Run = Callable[[Confirmation | None, dict[str, dict]], Any]


async def answered(
    ctx: ServerRequestContext,
    call: CallContext,
    params: Params,
    run: Run,
    *,
    refuse: Callable[[str], Any] = error_result,
) -> Any:
    """The call's answer: ``run`` in a worker thread (once, unless it asks), its questions put to
    the client as its era allows (see the module docstring). ``refuse``: the answer of a call whose
    questions cannot be put (an error result for tools/call; prompts/get raises)."""
    if call.modern:
        return await _modern_round(call, params, run, refuse)
    return await _on_stream(ctx, call, run)


async def prompt_answer(
    ctx: ServerRequestContext, call: CallContext, params: types.GetPromptRequestParams
) -> types.GetPromptResult | types.InputRequiredResult:
    """``prompts/get``, with the rounds of questions a route prompt's handler asks: input-required
    rounds for a 2026-07-28 client; a handshake-era ``prompts/get`` has no stream to ask on."""
    if not call.modern:
        call = call.replace(can_ask=())  # its handler may not ask
    run = functools.partial(_prompt, call, params.name, params.arguments)
    if call.modern:
        return await answered(ctx, call, params, run, refuse=_refused_prompt)
    outcome = await in_thread(run, None, {})
    if isinstance(outcome, Asked):
        _refused_prompt("it asks its caller, which only 2026-07-28 clients answer in prompts/get")
    return outcome


def _prompt(
    call: CallContext, name: str, arguments: dict | None, _confirmation: None, answers: dict[str, dict]
) -> types.GetPromptResult | Asked:
    return prompts.get_prompt(call, name, arguments, answers=answers)


def _refused_prompt(reason: str) -> NoReturn:
    raise RequestRefused(f"The prompt cannot be made: {reason}.")


# --- 2026-07-28: an input-required result, and the retry that carries the answers ---


async def _modern_round(call: CallContext, params: Params, run: Run, refuse: Callable[[str], Any]) -> Any:
    claims = _claims(params.request_state, call, params)  # already unsealed and checked by the boundary
    confirmation = _carried_confirmation(claims, params)
    given = checked_answers(params.input_responses)  # AnswersRefused: -32602 (protocol.errors)
    if "nonce" in claims:
        given.pop(FIELD, None)  # the answer to the confirmation, not to a handler's question
    went = _went_to_url(claims, given)  # None unless this retry answers a URL question
    raw_answers = claims.get("answers")
    carried = raw_answers if isinstance(raw_answers, dict) else {}
    answers = {**given, **{k: v for k, v in carried.items() if isinstance(v, dict)}}
    raw_rounds = claims.get("rounds")
    rounds = raw_rounds if type(raw_rounds) is int else 0
    outcome = await in_thread(run, confirmation, answers)
    if isinstance(outcome, Asked) and outcome.out_of_band is not None and went is not None:
        # The person agreed to open the page (or not): wait for the step there, then run again.
        if not went or not await _step_taken(outcome.out_of_band.done):
            return outcome.out_of_band.unanswered
        outcome = await in_thread(run, confirmation, answers)
    if not isinstance(outcome, Asked):
        return outcome
    if outcome.confirms:
        state = _state(call, params, {}, rounds=rounds, confirmed=False, nonce=secrets.token_urlsafe(16))
        return types.InputRequiredResult(input_requests=outcome.requests, request_state=state)
    accepted = confirmation is not None and confirmation.accepted
    if outcome.out_of_band is not None:
        if rounds >= MAX_ROUNDS:
            return outcome.out_of_band.unanswered
        _check_size(answers)
        state = _state(call, params, answers, rounds=rounds + 1, confirmed=accepted, url=True)
        return types.InputRequiredResult(input_requests=outcome.requests, request_state=state)
    _refuse_missing(outcome, call)
    if rounds >= MAX_ROUNDS:
        return refuse(f"The handler asked more than {MAX_ROUNDS} rounds of questions; nothing more ran.")
    kept = {key: answer for key, answer in answers.items() if key not in outcome.requests}
    _check_size(kept)
    state = _state(call, params, kept, rounds=rounds + 1, confirmed=accepted)
    return types.InputRequiredResult(input_requests=outcome.requests, request_state=state)


def _check_size(answers: dict[str, dict]) -> None:
    if _size(answers) > MAX_ANSWERS_BYTES:
        raise AnswersRefused(f"inputResponses: over {MAX_ANSWERS_BYTES:,} bytes in all rounds")


def _went_to_url(claims: dict, given: dict[str, dict]) -> bool | None:
    """Whether the person agreed to open the page of the URL question this retry answers (its answer
    taken out of ``given``: it is not a handler's); None when the round asked no URL question."""
    if claims.get("url") is not True:
        return None
    answer = given.pop(URL_KEY, None)
    return isinstance(answer, dict) and answer.get("action") == "accept"


def _carried_confirmation(claims: dict, params: Params) -> Confirmation | None:
    """The user's verdict a retry carries: its answer to a pending confirmation (spent now: a
    replayed state is asked again), or the yes of an earlier round; None when there is neither."""
    if claims.get("confirmed") is True:
        return Confirmation(Verdict.ACCEPTED)  # confirmed before the handler's own questions began
    nonce = claims.get("nonce")
    answer = (params.input_responses or {}).get(FIELD)
    if isinstance(nonce, str) and isinstance(answer, types.ElicitResult):
        if _spent.spend(nonce, settings.MCP_CONFIRM_SECONDS):
            return Confirmation(verdict_of(answer))
    return None


def _binding(call: CallContext, params: Params) -> dict[str, str]:
    return {
        "who": _answerer(call.caller),
        "tool": params.name,
        "args": arguments_hash(params.arguments or {}),
    }


def _state(
    call: CallContext,
    params: Params,
    answers: dict[str, dict],
    *,
    rounds: int,
    confirmed: bool,
    nonce: str | None = None,
    url: bool = False,
) -> str:
    """The ``requestState`` of a round, bound to this call; the SDK's boundary seals it. ``url``: the
    round asks a URL question, whose answer the retry carries under ``URL_KEY``."""
    claims: dict[str, Any] = {
        "v": _STATE_VERSION,
        "rounds": rounds,
        "confirmed": confirmed,
        "answers": answers,
    }
    if nonce is not None:
        claims["nonce"] = nonce
    if url:
        claims["url"] = True
    return json.dumps({**claims, **_binding(call, params)}, separators=(",", ":"))


def _claims(state: str | None, call: CallContext, params: Params) -> dict:
    """What a ``_state`` minted for this very call carries; nothing for any other state."""
    if state is None:
        return {}
    try:
        claims = json.loads(state)
    except ValueError:
        return {}
    if not isinstance(claims, dict) or claims.get("v") != _STATE_VERSION:
        return {}
    if any(claims.get(key) != value for key, value in _binding(call, params).items()):
        return {}
    return claims


def _refuse_missing(asked: Asked, call: CallContext) -> None:
    missing = missing_capabilities(asked, call.can_ask)
    if missing is None:
        return
    names = ", ".join(sorted(asked.capabilities_needed() - set(call.can_ask)))
    raise MissingClientCapability(
        f"The tool asks its caller through {names}, which this request's client capabilities do not declare.",
        missing,
    )


# --- handshake era: server requests on the call's own stream ---

_NO_STREAM = "The tool asks its caller, and this connection cannot carry the question (no stream)."
_TOO_MANY_ROUNDS = f"The tool asked more than {MAX_ROUNDS} rounds of questions; nothing more ran."
_NOTHING_ELSE = "Nothing else ran."


async def _on_stream(ctx: ServerRequestContext, call: CallContext, run: Run) -> Any:
    confirmation: Confirmation | None = None
    answers: dict[str, dict] = {}
    rounds = 0
    while True:
        outcome = await in_thread(run, confirmation, answers)
        if not isinstance(outcome, Asked):
            return outcome
        if outcome.confirms:
            if confirmation is not None:  # asked twice in one call: the tool changed meanwhile
                return error_result("The tool's confirmation changed while it was asked; nothing ran.")
            confirmation = await _confirm_on_stream(ctx, outcome)
            continue
        if outcome.out_of_band is not None:
            if rounds >= MAX_ROUNDS or not await _url_step_on_stream(ctx, outcome, outcome.out_of_band):
                return outcome.out_of_band.unanswered
            rounds += 1
            continue
        refused = await _put_on_stream(ctx, call, outcome, answers)
        if refused is not None:
            return error_result(refused)
        rounds += 1
        if rounds >= MAX_ROUNDS:
            return error_result(
                f"The tool asked more than {MAX_ROUNDS} rounds of questions; nothing more ran."
            )


async def _put_on_stream(
    ctx: ServerRequestContext, call: CallContext, asked: Asked, answers: dict[str, dict]
) -> str | None:
    """Put a handler's round of questions, adding the answers to ``answers``; why not, if not."""
    if missing_capabilities(asked, call.can_ask) is not None:
        names = ", ".join(sorted(asked.capabilities_needed() - set(call.can_ask)))
        return (
            f"The tool asks its caller through {names}, which this client did not declare. Nothing else ran."
        )
    for key, request in asked.requests.items():
        answer = await _send_on_stream(ctx, request)
        if isinstance(answer, str):
            return answer
        answers[key] = answer_json(answer)
    if _size(answers) > MAX_ANSWERS_BYTES:
        return f"The client's answers are over {MAX_ANSWERS_BYTES:,} bytes in all."
    return None


async def _url_step_on_stream(ctx: ServerRequestContext, asked: Asked, step: OutOfBand) -> bool:
    """Put the URL question on this call's stream and wait for the step at the page; True once it is
    taken (the client told with ``notifications/elicitation/complete``), False if the person would
    not go or did not finish in time."""
    request = asked.requests[URL_KEY]
    answer = await _send_on_stream(ctx, request)
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
        return False
    if not await _step_taken(step.done):
        return False
    elicitation_id = getattr(request.params, "elicitation_id", None)
    if elicitation_id:
        try:
            await ctx.session.send_elicit_complete(elicitation_id, related_request_id=ctx.request_id)
        except NoBackChannelError:
            pass  # the notification is a courtesy: the call's answer follows anyway
    return True


async def _step_taken(done: Callable[[], bool]) -> bool:
    """Wait (on the event loop, no worker thread held) until ``done``, at most MCP_CONFIRM_SECONDS."""
    with anyio.move_on_after(settings.MCP_CONFIRM_SECONDS):
        while not await in_thread(done):
            await anyio.sleep(URL_POLL_SECONDS)
        return True
    return False


async def _confirm_on_stream(ctx: ServerRequestContext, asked: Asked) -> Confirmation:
    """The user's verdict on ``elicitation/create`` sent on this request's stream."""
    answer = await _send_on_stream(ctx, asked.requests[FIELD])
    if answer == _NO_STREAM:
        return Confirmation(Verdict.NO_STREAM)
    if isinstance(answer, str):  # not answered in time, refused, or a malformed answer
        return Confirmation(Verdict.CANCELLED)
    return Confirmation(verdict_of(answer))


async def _send_on_stream(ctx: ServerRequestContext, request: types.InputRequest) -> Any:
    """The client's answer (the SDK's result) to one server request on this call's stream, or why
    there is none (a message for the error result)."""
    if not ctx.session.can_send_request:
        return _NO_STREAM
    try:
        with anyio.fail_after(settings.MCP_CONFIRM_SECONDS):
            return await ctx.session.send_request(
                request,
                _RESULT_TYPES[request.method],
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
    except NoBackChannelError:
        return _NO_STREAM
    except TimeoutError:
        return "The client did not answer the tool's question in time; nothing more ran."
    except (MCPError, ValidationError):  # the client refused, or answered with a malformed result
        logger.info("question not answered: the client sent an error or a malformed result")
        return "The client did not answer the tool's question; nothing more ran."


def _size(answers: dict[str, dict]) -> int:
    return len(json.dumps(answers, separators=(",", ":")).encode())


class RememberClientKinds:
    """Middleware: which questions each handshake-era session's client answers, for ``needs_stream``.

    Known from ``notifications/initialized`` on (the session's capabilities are committed then), so
    a ``tools/call`` of a client that can answer is served on an event stream, where its handler's
    questions can travel; a client that takes URL questions only counts too (asked to connect).
    """

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        session = session_id(ctx)
        if session is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            declared = ctx.session.client_capabilities
            # A client that takes URL questions only is asked on the stream too (connect an account).
            kinds = kinds_declared(declared) + (("url",) if asks_by_url(declared) else ())
            if _session_kinds.get(session) != kinds:
                _session_kinds[session] = kinds
                while len(_session_kinds) > MAX_SESSIONS:
                    _session_kinds.popitem(last=False)
        return await call_next(ctx)


def session_can_answer(session: str | None) -> bool:
    """Whether the handshake-era ``session``'s client declared it answers any question."""
    return bool(_session_kinds.get(session)) if session is not None else False


# --- the sealed state: spent nonces, the SDK's boundary ---


class _SpentNonces:
    """Nonces of answered confirmations, kept for as long as their state could still be accepted."""

    def __init__(self, limit: int = 100_000) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def spend(self, nonce: str, lifetime: float) -> bool:
        now = time.monotonic()
        with self._lock:
            if len(self._until) >= self._limit:
                self._until = {n: t for n, t in self._until.items() if t > now}
            if nonce in self._until or len(self._until) >= self._limit:
                return False  # a replay, or too many live answers to remember: ask again
            self._until[nonce] = now + lifetime
            return True


_spent = _SpentNonces()


def _answerer(caller: Caller) -> str:
    """Who may answer: the same credential, in the same tenant."""
    return f"t{caller.tenant_id}:{caller.credential_key}"


def _bound_principal(ctx: ServerRequestContext) -> str | None:
    gw = authenticated(ctx)
    if gw is None:
        raise refusal(NotAuthenticated())  # the boundary fails closed on this
    return _answerer(gw.caller)


class AuditedRequestStateBoundary(RequestStateBoundary):
    """The SDK's boundary; a tools/call it refuses (another caller, other arguments, expired) is
    audited ``denied``, as every refused call is."""

    async def __call__(self, ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
        try:
            return await super().__call__(ctx, call_next)
        except MCPError as err:
            if ctx.method == "tools/call" and err.data == _STATE_REFUSED:
                await _audit_refused_state(ctx)
            raise


async def _audit_refused_state(ctx: ServerRequestContext) -> None:
    gw = authenticated(ctx)
    params = ctx.params or {}
    if gw is None:
        return
    name = str(params.get("name", ""))[:128]
    await in_thread(
        functools.partial(
            record_call,
            gw.caller,
            name,
            params.get("arguments") or {},
            outcome=Outcome.DENIED,
            duration_ms=0,
            trace_id=(traceparent_of(params) or "")[3:35],
        )
    )


def request_state_boundary() -> RequestStateBoundary:
    """The SDK middleware sealing and checking ``requestState``, keyed from SECRET_KEY and its fallbacks."""
    keys = [
        salted_hmac("mcp_gateway.request_state", "key", secret=secret, algorithm="sha256").hexdigest()
        for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    ]
    security = RequestStateSecurity(
        keys=keys, ttl=float(settings.MCP_CONFIRM_SECONDS), bind_principal=_bound_principal
    )
    return AuditedRequestStateBoundary(security, default_audience=AUDIENCE)
