"""Errors raised by tenant actions; the edges (commands, API) translate them."""

from core.errors import DomainError


class TenantError(DomainError):
    """Base of every tenant-domain error; its message is safe to show to the caller.

    ``status`` and ``code`` say how HTTP shows it (core/problems.py renders them).
    """

    status = 400
    code = "tenant_error"


class TenantNotFound(TenantError):
    """No tenant with that slug, or one the caller may not reach."""

    status, code = 404, "tenant_not_found"

    def __init__(self, slug: str):
        self.slug = slug
        super().__init__(f"unknown tenant '{slug}'")


class InvalidValue(TenantError):
    """A field value that breaks its rule; names the field and the rule."""

    code = "invalid"

    def __init__(self, field: str, value: object, rule: str):
        self.field, self.value, self.rule = field, value, rule
        super().__init__(f"{field} {value!r} is invalid: {rule}")


class AlreadyTaken(TenantError):
    """A unique value already held by another row."""

    status, code = 409, "conflict"

    def __init__(self, field: str, value: object):
        self.field, self.value = field, value
        super().__init__(f"{field} '{value}' is already taken")


class UnknownSetting(TenantError):
    """A tenant setting key the platform does not know."""

    code = "unknown_setting"

    def __init__(self, key: str, known: list[str]):
        self.key = key
        super().__init__(f"unknown setting '{key}' (known: {', '.join(known)})")


class UserNotFound(TenantError):
    status, code = 404, "user_not_found"

    def __init__(self, username: str):
        self.username = username
        super().__init__(f"unknown user '{username}'")


class NotAMember(TenantError):
    status, code = 404, "not_a_member"

    def __init__(self, username: str, slug: str):
        super().__init__(f"user '{username}' is not a member of tenant '{slug}'")


class NotAllowed(TenantError):
    """The acting user may not make this change: names what they tried and who may."""

    status, code = 403, "forbidden"

    def __init__(self, what: str, who: str):
        self.what, self.who = what, who
        super().__init__(f"{what}: only {who} may do this")


class TokenNotFound(TenantError):
    """No token with that id in this tenant (one error for "missing" and "not yours")."""

    status, code = 404, "not_found"

    def __init__(self, token_id: object):
        self.token_id = token_id
        super().__init__("no such token")


class InvalidToken(TenantError):
    """A bearer token that is malformed, unknown, expired, revoked or for another tenant."""

    status, code = 401, "invalid_token"

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"invalid token: {reason}")
