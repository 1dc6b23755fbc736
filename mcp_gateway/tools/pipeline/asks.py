"""What a handler asks its caller (``request.ask``), checked, and the caller's answers, checked.

The questions come from tenant code in the sandbox and the answers from the MCP client: neither is
trusted. A handler asks at most ``MAX_QUESTIONS`` questions at a time, each under a key of the wire
name alphabet, each one of the three requests a client can answer (a form elicitation, sampling,
roots), built as the SDK's own request types; a form is a flat object of primitive fields, as the
spec requires (strings, numbers, integers, booleans, single and multiple choice). Answers are the
SDK's result types, bounded in size one by one and together: they go back into the handler and,
for a 2026-07-28 client, into the sealed ``requestState``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from pydantic import TypeAdapter, ValidationError

from apps_runtime.handler_contract import CAPABILITY_OF, ELICIT, ROOTS, SAMPLE

MAX_QUESTIONS = 8
MAX_ROUNDS = 5  # rounds of questions in one call (or one task's run)
MAX_FORM_FIELDS = 30
MAX_ANSWER_BYTES = 16 * 1024
MAX_ANSWERS_BYTES = 64 * 1024
_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# The key of a URL-mode question: asked in a round of its own, never with a handler's questions.
URL_KEY = "open_url"
_REQUESTS: dict[str, Any] = {
    ELICIT: types.ElicitRequest,
    SAMPLE: types.CreateMessageRequest,
    ROOTS: types.ListRootsRequest,
}
_PRIMITIVES = {"string", "number", "integer", "boolean"}
_answer = TypeAdapter(types.InputResponse)


class AskRefused(Exception):
    """Questions a handler asked that break a rule; names the question and the rule."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"The tool asked for input the platform refuses: {where}: {problem}.")


class HandlerAsked(Exception):
    """A route run for a read (a prompt's route) asked its caller: its checked questions."""

    def __init__(self, asked: Asked):
        super().__init__(f"the handler asked {', '.join(asked.requests)}")
        self.asked = asked


class AnswersRefused(Exception):
    """Answers (``inputResponses``) a client sent that break a rule."""


@dataclass(frozen=True)
class OutOfBand:
    """What a URL-mode question waits for: a step the person takes in their browser (connect an
    account, decide an approval). ``done`` says whether it is taken (a short database read, run in a
    worker thread); ``unanswered`` is the call's answer when it is not (the client declined to go
    there, or the step was not taken in time): the answer a client without URL mode gets."""

    done: Callable[[], bool]
    unanswered: types.CallToolResult


@dataclass(frozen=True)
class Asked:
    """Questions to put to the caller before the call goes on: each key to its wire request, in
    order. A handler's checked questions, or (``confirms``) the one question whether the user lets
    a tool marked ``confirm`` run (``tools.confirmation.confirmation_asked``), or (``out_of_band``)
    the one URL-mode question ``URL_KEY`` (``tools.pipeline.url_asks``): once the person took the
    step, the call runs again."""

    requests: dict[str, types.InputRequest]
    confirms: bool = False
    out_of_band: OutOfBand | None = None

    @property
    def confirmation_message(self) -> str:
        """The text of the confirmation question (``confirms`` only)."""
        params = next(iter(self.requests.values())).params  # a confirmation asks one question
        return str(getattr(params, "message", ""))

    def capabilities_needed(self) -> set[str]:
        return {CAPABILITY_OF[request.method] for request in self.requests.values()}


def checked_questions(raw: Any) -> Asked:
    """The questions of ``request.ask`` as SDK requests.

    Raises:
        AskRefused: the first question (or the whole) that breaks a rule.
    """
    if not isinstance(raw, dict) or not raw:
        raise AskRefused("questions", "must be a non-empty object")
    if len(raw) > MAX_QUESTIONS:
        raise AskRefused("questions", f"{len(raw)} at once, over the limit of {MAX_QUESTIONS}")
    requests: dict[str, types.InputRequest] = {}
    for key, question in raw.items():
        if not _KEY.match(key):
            raise AskRefused(repr(key[:40]), "a key is 1 to 64 letters, digits, '_', '.' or '-'")
        method = question.get("method") if isinstance(question, dict) else None
        if method not in _REQUESTS:
            raise AskRefused(key, "ask with elicit(), sample() or list_roots()")
        try:
            request = _REQUESTS[method].model_validate(question)
        except ValidationError as err:
            raise AskRefused(key, f"not a valid {method} request ({err.error_count()} problems)") from None
        if method == ELICIT:
            _check_form(key, request.params)
        requests[key] = request
    return Asked(requests)


def _check_form(key: str, params: Any) -> None:
    if not isinstance(params, types.ElicitRequestFormParams):
        raise AskRefused(key, "only form elicitation is offered")
    schema = params.requested_schema
    fields = schema.get("properties") if schema.get("type") == "object" else None
    if not isinstance(fields, dict) or len(fields) > MAX_FORM_FIELDS:
        raise AskRefused(key, f"a form is an object with at most {MAX_FORM_FIELDS} properties")
    for name, field in fields.items():
        if not isinstance(field, dict) or not _is_form_field(field):
            raise AskRefused(
                f"{key}.{str(name)[:40]}", "a form field is a string, number, integer, boolean or choice"
            )


def _is_form_field(field: dict) -> bool:
    if field.get("type") in _PRIMITIVES:
        return True
    items = field.get("items")
    # A multiple choice (SEP-1330): an array of strings from an enum or titled constants.
    return field.get("type") == "array" and isinstance(items, dict) and ("enum" in items or "anyOf" in items)


def missing_capabilities(
    asked: Asked, declared: types.ClientCapabilities | tuple[str, ...] | None
) -> types.ClientCapabilities | None:
    """The client capabilities ``asked`` needs that the client did not declare (its capabilities,
    or the kinds of question it answers: ``CallContext.can_ask``), or None."""
    kinds = declared if isinstance(declared, tuple) else kinds_declared(declared)
    missing = asked.capabilities_needed() - set(kinds)
    if not missing:
        return None
    return types.ClientCapabilities(
        elicitation=types.ElicitationCapability(form=types.FormElicitationCapability())
        if "elicitation" in missing
        else None,
        sampling=types.SamplingCapability() if "sampling" in missing else None,
        roots=types.RootsCapability() if "roots" in missing else None,
    )


def asks_by_url(declared: types.ClientCapabilities | None) -> bool:
    """Whether a client declared URL-mode elicitation (``elicitation: {url: {}}``): a step the person
    takes in their browser is then asked with a URL, never answered with a link alone. The one rule,
    next to ``kinds_declared`` (form mode, for a handler's questions and confirmations)."""
    return declared is not None and declared.elicitation is not None and declared.elicitation.url is not None


def kinds_declared(declared: types.ClientCapabilities | None) -> tuple[str, ...]:
    """The kinds of question a client declared it answers (an empty ``elicitation`` is form mode;
    URL mode is ``asks_by_url``)."""
    if declared is None:
        return ()
    elicitation = declared.elicitation
    form = elicitation is not None and (elicitation.form is not None or elicitation.url is None)
    kinds = {
        "elicitation": form,
        "sampling": declared.sampling is not None,
        "roots": declared.roots is not None,
    }
    return tuple(kind for kind, yes in kinds.items() if yes)


def answer_json(answer: Any) -> dict:
    """An SDK answer (or its dict) as the JSON the handler reads."""
    if isinstance(answer, dict):
        answer = _answer.validate_python(answer)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


def checked_answers(raw: dict[str, Any] | None) -> dict[str, dict]:
    """A client's ``inputResponses`` (already the SDK's types) as JSON, bounded.

    Raises:
        AnswersRefused: a key out of the alphabet, or answers over their size bounds.
    """
    answers: dict[str, dict] = {}
    total = 0
    for key, answer in (raw or {}).items():
        if not _KEY.match(key):
            continue  # not a key this platform ever asks with: ignored, as extra answers are
        value = answer_json(answer)
        size = len(json.dumps(value, separators=(",", ":")).encode())
        total += size
        if size > MAX_ANSWER_BYTES or total > MAX_ANSWERS_BYTES:
            raise AnswersRefused(
                f"inputResponses: over {MAX_ANSWER_BYTES:,} bytes for one answer "
                f"or {MAX_ANSWERS_BYTES:,} in all"
            )
        answers[key] = value
    return answers
