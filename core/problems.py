"""One error shape for every HTTP surface: RFC 9457 problem details, ``application/problem+json``.

Every body has ``type``, ``title``, ``status``, ``detail`` and ``code``, plus members of its own:
``errorId`` (500s and handler failures; also the ``X-Error-Id`` header), ``instance`` (where a tenant
admin reads a failed handler run), ``problems``/``warnings`` (a refused deploy, 422) and ``errors``
(a request body's invalid fields, field -> messages).

A domain error (``core.errors.DomainError``) renders itself: it carries ``status`` and ``code``, and
may add members of its own (``problem_members()``) or an ``allowed`` list of methods (405). So this
module knows no domain package, and every package below ``lowcode_platform`` can answer with it.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.http import JsonResponse

from core.challenges import bearer_challenge
from core.error_ids import error_id_note
from core.errors import DomainError

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem(status: int, code: str, detail: str, *, title: str | None = None, **members: Any) -> dict:
    """A problem body; ``members`` are its extension members (``errorId``, ``problems``, ...)."""
    return {
        "type": f"about:blank#{code}",
        "title": title or phrase(status),
        "status": status,
        "detail": detail,
        "code": code,
        **members,
    }


def problem_response(body: dict, *, headers: dict[str, str] | None = None) -> JsonResponse:
    """Send a ``problem`` body with its status and the problem media type."""
    response = JsonResponse(body, status=body["status"], content_type=PROBLEM_CONTENT_TYPE, headers=headers)
    if body["status"] == 401 and "WWW-Authenticate" not in response:
        response["WWW-Authenticate"] = bearer_challenge()
    return response


def server_error_response(error_id: str) -> JsonResponse:
    """The one 500: a problem whose only detail is the error id (the caller logged the cause under it)."""
    body = problem(500, "server_error", f"Internal error {error_id_note(error_id)}.", errorId=error_id)
    return problem_response(body, headers={"X-Error-Id": error_id})


def error_response(exc: DomainError) -> JsonResponse:
    """A domain error as a problem response: status, code and extra members come from the exception."""
    allowed = getattr(exc, "allowed", None)
    headers = {"Allow": ", ".join(allowed)} if allowed else None
    members = dict(exc.problem_members())
    detail = members.pop("detail", None) or str(exc)
    return problem_response(problem(exc.status, exc.code, detail, **members), headers=headers)


def phrase(status: int) -> str:
    """The HTTP reason phrase of ``status`` (``Error`` for a status Python does not name)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
