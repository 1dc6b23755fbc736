"""One error shape for every HTTP surface: RFC 9457 problem details, ``application/problem+json``.

Views raise; they never build an error body. The DRF exception handler below renders domain errors
(``core.errors.DomainError``) from the exception itself (its ``status`` and ``code``), DRF's own
errors (authentication, validation, parsing) from theirs, and anything else as a 500 whose only
detail is an error id: the exception is logged under that id and never reaches the caller. Plain
Django views (the apps' front-end path) answer with ``error_response`` and ``problem_response``, so
both paths agree.

Every body has ``type``, ``title``, ``status``, ``detail`` and ``code``, plus members of its own:
``errorId`` (500s and handler failures; also the ``X-Error-Id`` header), ``instance`` (where a tenant
admin reads a failed handler run), ``problems``/``warnings`` (a refused deploy, 422) and ``errors``
(a request body's invalid fields, field -> messages).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.error_ids import new_error_id
from core.errors import DomainError
from core.problems import error_response, phrase, problem, problem_response, server_error_response

logger = logging.getLogger("lowcode_platform.api")

_MAX_DETAIL = 500


def exception_handler(exc: Exception, context: dict[str, Any]) -> JsonResponse:
    """DRF's ``EXCEPTION_HANDLER``: every error an API view raises, as a problem response."""
    if isinstance(exc, DomainError):
        # As DRF's own handler does for its errors: an atomic request's writes are undone.
        set_rollback()
        return error_response(exc)
    if isinstance(exc, RequestDataTooBig):  # a SuspiciousOperation DRF leaves alone: it was a 500
        detail = f"the request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"
        return problem_response(problem(413, "request_too_large", detail))
    response = drf_exception_handler(exc, context)
    if response is not None:
        # DRF worked out the status and the headers (WWW-Authenticate, Retry-After, Allow).
        headers = {k: v for k, v in response.items() if k in ("WWW-Authenticate", "Retry-After", "Allow")}
        return problem_response(_drf_problem(exc, response.status_code), headers=headers)
    error_id = new_error_id()
    logger.exception("unhandled API error %s", error_id)
    return server_error_response(error_id)


def _drf_problem(exc: Exception, status: int) -> dict:
    if isinstance(exc, drf_exceptions.ValidationError):
        errors = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        return problem(status, "invalid", _summary(errors), errors=errors)
    if isinstance(exc, drf_exceptions.APIException):
        return problem(status, exc.default_code, str(exc.detail))
    # Http404 and Django's PermissionDenied, which DRF converts.
    code = "not_found" if status == 404 else "permission_denied"
    return problem(status, code, phrase(status))


def _summary(errors: dict) -> str:
    """The invalid fields in one line, e.g. ``expires_days: Ensure this value is ...``."""
    parts = []
    for field, messages in errors.items():
        text = messages if isinstance(messages, str) else "; ".join(str(m) for m in _flat(messages))
        parts.append(f"{field}: {text}")
    summary = "; ".join(parts) or "invalid input"
    return summary if len(summary) <= _MAX_DETAIL else summary[: _MAX_DETAIL - 3] + "..."


def _flat(value: Any) -> list:
    if isinstance(value, dict):
        return [item for nested in value.values() for item in _flat(nested)]
    if isinstance(value, list):
        return [item for nested in value for item in _flat(nested)]
    return [value]


def server_error(request: Any) -> JsonResponse:
    """Django's ``handler500``: an uncaught error as a problem with an error id, never a page.

    Django calls it while handling the exception, so the exception is logged under the id.
    """
    error_id = new_error_id()
    logger.error("unhandled error (error id %s)", error_id, exc_info=sys.exc_info())
    return server_error_response(error_id)
