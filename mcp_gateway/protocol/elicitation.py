"""Asking the user to confirm a call, through MCP elicitation (form mode), in both protocol eras.

- Handshake-era clients (2025-xx) get ``elicitation/create`` on the call's own stream, and the
  call waits on the event loop (no worker thread held) for the answer, at most
  ``MCP_CONFIRM_SECONDS``.
- 2026-07-28 clients get an input-required result; they retry the call with the answer and the
  ``requestState`` it carried. The SDK's ``RequestStateBoundary`` seals that state (AES-GCM under a
  key derived from ``SECRET_KEY``), expires it after ``MCP_CONFIRM_SECONDS`` and binds it to the
  tool name, a digest of the arguments and the caller (tenant, user, token or OAuth connection): a
  retry with another token or other arguments is refused before any handler runs. Inside the seal
  the gateway repeats that binding and a nonce; an answered state is spent in this process, so a
  replayed retry is asked again instead of running again.

Only calls that would run are asked about: unknown or hidden tools, arguments that fail the schema
and calls over their rate limit go straight to the call, which refuses them as usual.
"""

from __future__ import annotations

import functools
import json
import logging
import secrets
import threading
import time
from typing import Any

import anyio
import mcp.types as types
from django.conf import settings
from django.utils.crypto import salted_hmac
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcp_gateway.models import ToolCallAudit
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import authenticated
from mcp_gateway.tools.audit import arguments_hash, record_call
from mcp_gateway.tools.call_context import CallContext
from mcp_gateway.tools.catalog import cached_catalog
from mcp_gateway.tools.confirmation import (
    FIELD,
    REQUESTED_SCHEMA,
    Confirmation,
    Verdict,
    verdict_of,
)
from mcp_gateway.tools.questions import confirmation_question
from mcp_gateway.tools.tracing import traceparent_of
from tenants.callers import Caller

logger = logging.getLogger("mcp_gateway.protocol.elicitation")

AUDIENCE = "lowcode-platform/mcp"
_STATE_VERSION = 1
_ASK_STATE_VERSION = 1  # the state of a handler's rounds of questions (``asking``): key "asks"
# The data of the SDK boundary's one refusal (``request_state._reject``): a frozen wire shape.
_STATE_REFUSED = {"reason": "invalid_request_state"}
Outcome = ToolCallAudit.Outcome


async def confirm_call(
    ctx: ServerRequestContext, call: CallContext, params: types.CallToolRequestParams
) -> Confirmation | types.InputRequiredResult | None:
    """Ask the user about this call if its tool wants it.

    Returns None when the call needs no confirmation (for the call to decide everything), the
    user's verdict, or, for a 2026-07-28 client not yet asked, the input-required result to send.
    """
    catalog = cached_catalog(call.tenant)
    if catalog is not None:
        entry = catalog.by_name.get(params.name)
        if entry is None or not entry.confirm:
            return None  # the common case: no thread crossing at all
    arguments = params.arguments or {}
    asked = await in_thread(_question, call, params.name, arguments)
    if asked is None:
        return None
    if isinstance(asked, Confirmation):
        return asked
    if not _can_ask(ctx):
        return Confirmation(Verdict.NO_CAPABILITY)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return _modern_round(call, params, asked)
    return await _ask_on_stream(ctx, asked)


def _question(call: CallContext, name: str, arguments: dict[str, Any]) -> str | Confirmation | None:
    """The question for a call that would run and needs asking; the call decides on any other."""
    return confirmation_question(call, name, arguments)


def _can_ask(ctx: ServerRequestContext) -> bool:
    """Whether the client declared form-mode elicitation (an empty ``elicitation`` means form)."""
    declared = ctx.session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def _ask_on_stream(ctx: ServerRequestContext, message: str) -> Confirmation:
    """``elicitation/create`` on this request's stream, waiting on the loop for the answer."""
    if not ctx.session.can_send_request:
        return Confirmation(Verdict.NO_STREAM)
    try:
        with anyio.fail_after(settings.MCP_CONFIRM_SECONDS):
            answer = await ctx.session.elicit_form(
                message, REQUESTED_SCHEMA, related_request_id=ctx.request_id
            )
    except NoBackChannelError:
        return Confirmation(Verdict.NO_STREAM)
    except TimeoutError:
        return Confirmation(Verdict.CANCELLED)
    except (MCPError, ValidationError):  # the client answered with an error or a malformed result
        logger.info("confirmation not answered: the client sent an error or a malformed result")
        return Confirmation(Verdict.CANCELLED)
    return Confirmation(verdict_of(answer))


def _modern_round(
    call: CallContext, params: types.CallToolRequestParams, message: str
) -> Confirmation | types.InputRequiredResult:
    """The verdict carried by a retried call, or the input-required result that asks for it."""
    answer = (params.input_responses or {}).get(FIELD)
    state = params.request_state  # already unsealed and checked by the boundary
    if isinstance(answer, types.ElicitResult) and state is not None and _spend(state, call, params):
        return Confirmation(verdict_of(answer))
    if _ask_claims(state, call, params).get("confirmed") is True:
        return Confirmation(Verdict.ACCEPTED)  # confirmed before the handler's own questions began
    return types.InputRequiredResult(
        input_requests={
            FIELD: types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=REQUESTED_SCHEMA)
            )
        },
        request_state=_new_state(call, params),
    )


def _binding(call: CallContext, params: types.CallToolRequestParams) -> dict[str, str]:
    return {
        "who": _answerer(call.caller),
        "tool": params.name,
        "args": arguments_hash(params.arguments or {}),
    }


def _new_state(call: CallContext, params: types.CallToolRequestParams) -> str:
    claims = {"v": _STATE_VERSION, "nonce": secrets.token_urlsafe(16), **_binding(call, params)}
    return json.dumps(claims, separators=(",", ":"))


def _spend(state: str, call: CallContext, params: types.CallToolRequestParams) -> bool:
    """Whether ``state`` was minted for this very call and not answered before (then it is spent)."""
    try:
        claims = json.loads(state)
        nonce = claims["nonce"]
    except (ValueError, KeyError, TypeError):
        return False
    if claims.get("v") != _STATE_VERSION or not isinstance(nonce, str):
        return False
    if any(claims.get(key) != value for key, value in _binding(call, params).items()):
        return False
    return _spent.spend(nonce, settings.MCP_CONFIRM_SECONDS)


def ask_state(
    call: CallContext,
    params: types.CallToolRequestParams,
    answers: dict[str, dict],
    *,
    rounds: int,
    confirmed: bool,
) -> str:
    """The ``requestState`` of a round of a handler's questions: the answers so far, bound to this call.

    ``confirmed``: the user already said yes to running a ``confirm`` tool; its later rounds are not
    asked that again. The SDK's boundary seals it (and binds it to the caller, tool and arguments).
    """
    claims = {"asks": _ASK_STATE_VERSION, "rounds": rounds, "confirmed": confirmed, "answers": answers}
    return json.dumps({**claims, **_binding(call, params)}, separators=(",", ":"))


def carried_answers(
    state: str | None, call: CallContext, params: types.CallToolRequestParams
) -> tuple[dict[str, dict], int]:
    """The answers and round count an ``ask_state`` carries for this very call; none for any other state."""
    claims = _ask_claims(state, call, params)
    answers, rounds = claims.get("answers"), claims.get("rounds")
    if not isinstance(answers, dict) or type(rounds) is not int:
        return {}, 0
    return {key: value for key, value in answers.items() if isinstance(value, dict)}, rounds


def _ask_claims(state: str | None, call: CallContext, params: types.CallToolRequestParams) -> dict:
    if state is None:
        return {}
    try:
        claims = json.loads(state)
    except ValueError:
        return {}
    if not isinstance(claims, dict) or claims.get("asks") != _ASK_STATE_VERSION:
        return {}
    if any(claims.get(key) != value for key, value in _binding(call, params).items()):
        return {}
    return claims


class _SpentNonces:
    """Nonces of answered states, kept for as long as their state could still be accepted."""

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
    """Who may answer a confirmation: the same credential, in the same tenant."""
    return f"t{caller.tenant_id}:{caller.credential_key}"


def _bound_principal(ctx: ServerRequestContext) -> str | None:
    gw = authenticated(ctx)
    if gw is None:
        raise MCPError(types.INVALID_REQUEST, "Not authenticated")  # the boundary fails closed on this
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
