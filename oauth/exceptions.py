"""Errors of the authorization server's domain; views and the API translate them."""

from core.errors import DomainError


class OAuthError(DomainError):
    """Base of the OAuth-domain errors; the message is safe to show."""

    code = "oauth_error"


class UnknownResource(OAuthError):
    """A ``resource`` (RFC 8707) that is not the MCP endpoint of a tenant of this platform."""

    code = "invalid_target"

    def __init__(self, resource: str):
        self.resource = resource
        super().__init__("the resource is not the MCP endpoint of a tenant on this platform")


class OriginNotConfigured(OAuthError):
    """PUBLIC_BASE_URL is unset outside DEBUG, so no issuer or resource URL can be named."""

    code = "not_configured"

    def __init__(self) -> None:
        super().__init__("PUBLIC_BASE_URL is not set: OAuth is unavailable")


class ConnectionNotFound(OAuthError):
    """No such connection in this tenant, or not one the caller may see (one error for both)."""

    code = "not_found"

    def __init__(self, connection_id: object):
        self.connection_id = connection_id
        super().__init__("no such connection")


class RedirectUriRefused(OAuthError):
    """A client's redirect URI outside the policy: https, or http on a loopback address only."""

    code = "invalid_redirect_uri"

    def __init__(self, uri: str, rule: str):
        self.uri, self.rule = uri, rule
        super().__init__(f"redirect URI {uri!r} refused: {rule}")


class NotNarrower(OAuthError):
    """A connection's new app scopes that would widen it (or are no app scopes)."""

    status = 400
    code = "invalid"
