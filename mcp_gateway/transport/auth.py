"""Who may use ``/t/<tenant>/mcp``, through the SDK's auth seams.

* ``EndpointTokenVerifier`` is the SDK's ``TokenVerifier`` for one tenant's endpoint: API tokens
  and OAuth access tokens become an ``AccessToken`` carrying the tenant and the caller.
* The SDK's ``BearerAuthBackend`` parses ``Authorization: Bearer``, asks the verifier and checks
  the token's audience against the endpoint's URL (RFC 8707), so the user it puts in
  ``scope["user"]`` is what the SDK binds each session to.
* ``RequireCaller`` is the SDK's ``RequireAuthMiddleware``: 401 with ``WWW-Authenticate: Bearer
  error="invalid_token", error_description=..., resource_metadata=...`` unless a caller was found.
* The metadata (``metadata.resource_metadata``) is the SDK's ``ProtectedResourceMetadata`` (RFC 9728).

Where the seams do not fit as they are: the endpoint's URL depends on the tenant (and, without
PUBLIC_BASE_URL and in DEBUG, on the Host), so the backend and the middleware are built per request (plain
objects, no I/O); the 401 keeps the gateway's body ``{"error": message}`` and its two messages
(no token, a bad token), so ``RequireCaller`` renders its own error; and the metadata may name no
authorization server (RFC 9728 allows it; the SDK's model requires one), for a platform running
without OAuth.
"""

from __future__ import annotations

import functools

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from pydantic import AnyHttpUrl, ConfigDict, Field, ValidationError
from starlette.authentication import AuthCredentials, UnauthenticatedUser
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Scope, Send

from core.origin import mcp_endpoint_url, resource_metadata_url
from mcp_gateway.exceptions import GatewayRefused
from mcp_gateway.protocol.concurrency import in_thread
from mcp_gateway.protocol.context import GatewayRequest
from mcp_gateway.transport.responses import send_auth_error
from oauth.access import caller_for_access_token
from oauth.tokens import is_access_token
from tenants.callers import caller_for_token
from tenants.exceptions import InvalidToken
from tenants.lookups import tenant_by_slug, tenant_with_token
from tenants.models import Tenant
from tenants.tokens import parse_token

TOKEN_REQUIRED = "Authorization: Bearer <token> is required."
TOKEN_INVALID = "The token is invalid, expired, revoked or for another tenant."
# Why a request has no caller, for the 401 (set only on a scope without one).
_REFUSAL_KEY = "lcp.refusal"

MCP_OFF = "The MCP server is switched off for this tenant (setting mcpServer)."


def endpoint_tenant(slug: str) -> Tenant:
    """The tenant served at ``/t/<slug>/mcp``, if that endpoint exists (its metadata exists alike).

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint.
    """
    return _open_endpoint(tenant_by_slug(slug))  # every request asks: a prepared lookup


def _open_endpoint(tenant: Tenant | None) -> Tenant:
    if tenant is None:
        raise GatewayRefused(404, "Unknown tenant.")
    if not tenant.setting("mcpServer"):
        raise GatewayRefused(404, MCP_OFF)
    return tenant


def verify_bearer(slug: str, raw: str) -> tuple[GatewayRequest, str | None]:
    """The tenant of ``/t/<slug>/mcp`` and the caller its bearer token proves: the gateway's
    synchronous core of ``endpoint_auth.EndpointTokenVerifier``.

    The token is a static API token, or an OAuth access token (``lcpo_``). Also returns the
    token's audience, which the caller must check against the endpoint's URL: the resource an
    OAuth token was issued for (RFC 8707; None if not exactly one), and None for an API token,
    which is good at its own tenant's endpoint only.

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint.
        InvalidToken: a malformed, expired, revoked or other tenant's token.
    """
    if is_access_token(raw):
        tenant = endpoint_tenant(slug)
        caller, audience = caller_for_access_token(tenant, raw)
        return GatewayRequest(tenant=tenant, caller=caller), audience
    try:
        key_id, _secret = parse_token(raw)
    except InvalidToken:
        endpoint_tenant(slug)  # an unknown tenant is a 404 before any token is judged
        raise
    found, token = tenant_with_token(slug, key_id)
    tenant = _open_endpoint(found)
    return GatewayRequest(tenant=tenant, caller=caller_for_token(tenant, raw, token)), None


class GatewayAccessToken(AccessToken):
    """The SDK's view of a caller; ``gateway`` is the tenant and caller the token proved."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    gateway: GatewayRequest = Field(exclude=True, repr=False)


class EndpointTokenVerifier:
    """The SDK's ``TokenVerifier`` for one request at ``/t/<slug>/mcp``, reached at ``resource``
    (None: the platform has no public origin, so no OAuth token can name this endpoint)."""

    def __init__(self, slug: str, resource: str | None):
        self.slug = slug
        self.resource = resource
        self.presented = False  # a token was presented (if refused: a bad one, not a missing one)

    async def verify_token(self, token: str) -> AccessToken | None:
        """Raises: GatewayRefused: 404 for an unknown tenant or a switched-off endpoint."""
        token = token.strip()
        if not token:
            return None
        self.presented = True
        try:
            gw, audience = await in_thread(verify_bearer, self.slug, token)
        except InvalidToken:
            return None
        if self.resource is None and gw.caller.oauth_grant_id is not None:
            return None  # its audience cannot be checked against an endpoint URL that has no origin
        # The session belongs to the token, or to the OAuth connection whose refreshed access
        # tokens keep it (the SDK compares client_id and subject; the caps count by it).
        principal = gw.caller.credential_key
        return GatewayAccessToken(
            token=principal,
            client_id=f"tenant:{gw.tenant.pk}",
            subject=principal,
            scopes=[],
            # An API token is good at its own tenant's endpoint only, whatever URL reached it.
            resource=self.resource if gw.caller.oauth_grant_id is None else audience,
            gateway=gw,
        )


@functools.lru_cache(maxsize=1024)
def _parsed_url(url: str) -> AnyHttpUrl:
    # Every request asks; a tenant's endpoint is reached by one or two URLs.
    return AnyHttpUrl(url)


async def authenticate(scope: Scope, slug: str, origin: str | None) -> Scope:
    """``scope`` with ``user`` and ``auth`` set as Starlette's AuthenticationMiddleware does (an
    ``AuthenticatedUser`` of the SDK, whose access token carries the tenant and caller
    (``protocol.context.scope_caller`` reads them), or none).

    Raises:
        GatewayRefused: 404 for an unknown tenant or a switched-off endpoint (before any 401);
            400 for a Host that makes no URL.
    """
    resource = mcp_endpoint_url(origin, slug) if origin is not None else None
    try:
        audience = _parsed_url(resource) if resource is not None else None
    except ValidationError:
        raise GatewayRefused(400, "Invalid Host header") from None
    verifier = EndpointTokenVerifier(slug, resource)
    found = await BearerAuthBackend(verifier, resource_server_url=audience).authenticate(
        HTTPConnection(scope)
    )
    if found is None:
        if not verifier.presented:
            await in_thread(endpoint_tenant, slug)  # an unknown tenant is a 404, token or not
        refusal = TOKEN_INVALID if verifier.presented else TOKEN_REQUIRED
        return {**scope, "user": UnauthenticatedUser(), "auth": AuthCredentials(), _REFUSAL_KEY: refusal}
    credentials, user = found
    return {**scope, "user": user, "auth": credentials}


def refusal(scope: Scope) -> str:
    """Why ``authenticate`` found no caller for ``scope``: the 401's description."""
    return scope.get(_REFUSAL_KEY, TOKEN_REQUIRED)


class RequireCaller(RequireAuthMiddleware):
    """The SDK's gate in front of ``app``, for one request: 401 with ``WWW-Authenticate`` naming
    the endpoint's metadata unless ``authenticate`` found a caller; the body is the gateway's.
    """

    def __init__(self, app: ASGIApp, scope: Scope, origin: str | None, slug: str):
        # Without a public origin there is no metadata to point at (RFC 9728 makes it optional).
        metadata = resource_metadata_url(origin, slug) if origin is not None else None
        # The SDK annotates an AnyHttpUrl but only formats it, as ``_send_auth_error`` below does: a
        # str spares parsing a URL per request.
        super().__init__(app, required_scopes=[], resource_metadata_url=metadata)  # type: ignore[arg-type]
        self._refusal = refusal(scope)

    async def _send_auth_error(self, send: Send, status_code: int, error: str, description: str) -> None:
        # The SDK's status and error code, this request's own description, and the endpoint's
        # challenge and body (``responses``).
        message = self._refusal if status_code == 401 else description
        metadata = str(self.resource_metadata_url) if self.resource_metadata_url else None
        await send_auth_error(send, status_code, error, message, resource_metadata=metadata)
