"""The API's one exception handler: domain errors to status codes, surprises to an error id."""

from __future__ import annotations

import logging
from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from tenants.error_ids import new_error_id
from tenants.exceptions import (
    AlreadyTaken,
    InvalidValue,
    NotAllowed,
    NotAMember,
    TenantError,
    TenantNotFound,
    TokenNotFound,
    UnknownSetting,
    UserNotFound,
)

logger = logging.getLogger("tenants.api")

_STATUS = {
    TenantNotFound: status.HTTP_404_NOT_FOUND,
    UserNotFound: status.HTTP_404_NOT_FOUND,
    NotAMember: status.HTTP_404_NOT_FOUND,
    TokenNotFound: status.HTTP_404_NOT_FOUND,
    NotAllowed: status.HTTP_403_FORBIDDEN,
    AlreadyTaken: status.HTTP_409_CONFLICT,
    InvalidValue: status.HTTP_400_BAD_REQUEST,
    UnknownSetting: status.HTTP_400_BAD_REQUEST,
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, TenantError):
        code = _STATUS.get(type(exc), status.HTTP_400_BAD_REQUEST)
        return Response({"code": exc.code, "detail": str(exc)}, status=code)
    response = drf_exception_handler(exc, context)
    if response is not None:
        return response
    error_id = new_error_id()
    logger.exception("unhandled API error %s", error_id)
    return Response(
        {"code": "server_error", "detail": "Internal error.", "errorId": error_id},
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        headers={"X-Error-Id": error_id},
    )
