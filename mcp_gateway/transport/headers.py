"""Reading a request's headers off the ASGI scope, for the transport's checks before the SDK's."""

from __future__ import annotations

from typing import cast

from starlette.requests import Request
from starlette.types import Scope

SESSION_HEADER = b"mcp-session-id"


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower case), as Starlette's ``Headers.get`` gives it."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class HeaderView:
    """What the SDK's request checks (``check_accept_headers``, ``TransportSecurityMiddleware.
    validate_request``) read of a request, ``headers.get``, for the few headers they read: without a
    Starlette ``Request`` and its ``Headers`` built on every POST."""

    __slots__ = ("headers",)

    def __init__(self, scope: Scope, *names: bytes) -> None:
        self.headers = {name.decode(): value for name in names if (value := header(scope, name)) is not None}

    def as_request(self) -> Request:
        """This view where the SDK's checks take a ``Request``: the cast is the duck typing above."""
        return cast(Request, self)
