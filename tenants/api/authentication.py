"""DRF authentication by ``Authorization: Bearer <token>``."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from core.challenges import bearer_challenge
from tenants.exceptions import InvalidToken
from tenants.models import ApiToken
from tenants.tokens import verify_token


def bearer_token(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer`` header value, or None for another scheme."""
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates with a tenant API token; ``request.auth`` is the ApiToken row."""

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, ApiToken] | None:
        raw = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
        if raw is None:
            return None
        try:
            token = verify_token(raw)
        except InvalidToken as err:
            raise exceptions.AuthenticationFailed("invalid or expired token") from err
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return bearer_challenge(realm="api")
