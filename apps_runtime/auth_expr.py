"""Auth expressions: the one place of their grammar and of what each one allows.

Grammar (no spaces anywhere)::

    public            anyone, even an anonymous caller
    user              any member of the tenant
    role:a,b          a member holding at least one of the roles (role names ^[a-z][a-z0-9_]{0,39}$,
                      at least one, no duplicates)
    internal          never reachable from outside

Superusers pass every check except ``internal``. An ``internal`` route is reached only by internal
calls (the job runner, one handler calling another); those do not go through ``AuthExpr.allows``,
so ``allows`` answers False for ``internal`` whoever asks.
"""

import functools
import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

ROLE_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
ROLE_PREFIX = "role:"
KEYWORDS = ("public", "user", "internal")

_ROLE_NAME = re.compile(ROLE_NAME_PATTERN)

Kind = Literal["public", "user", "role", "internal"]


class InvalidAuthExpression(ValueError):
    """An auth expression that does not follow the grammar."""

    def __init__(self, expr: object, reason: str):
        self.expr = expr
        self.reason = reason
        super().__init__(f"invalid auth expression {expr!r}: {reason}")


class CallerLike(Protocol):
    """What ``AuthExpr.allows`` needs to know about a caller within one tenant (read only: a frozen
    ``tenants.callers.Caller`` is one)."""

    @property
    def is_authenticated(self) -> bool: ...

    @property
    def is_member(self) -> bool: ...

    @property
    def is_superuser(self) -> bool: ...

    @property
    def roles(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class AuthExpr:
    """A parsed auth expression; ``roles`` is empty unless ``kind`` is ``"role"``."""

    kind: Kind
    roles: frozenset[str] = field(default_factory=frozenset)

    def __str__(self) -> str:
        if self.kind == "role":
            return ROLE_PREFIX + ",".join(sorted(self.roles))
        return self.kind

    @property
    def is_internal(self) -> bool:
        return self.kind == "internal"

    def allows(self, caller: CallerLike) -> bool:
        """Whether ``caller``, coming from outside (HTTP or MCP), may pass this check."""
        if self.kind == "internal":
            return False
        if self.kind == "public":
            return True
        if not caller.is_authenticated:
            return False
        if caller.is_superuser:
            return True
        if not caller.is_member:
            return False
        if self.kind == "user":
            return True
        return bool(self.roles & frozenset(caller.roles))


def parse_auth(expr: str) -> AuthExpr:
    """Parse ``expr`` into an ``AuthExpr`` (results are cached).

    Raises:
        InvalidAuthExpression: ``expr`` is not a string or does not follow the grammar; ``reason``
            says what to change.
    """
    if not isinstance(expr, str):
        raise InvalidAuthExpression(expr, "must be a string such as 'user' or 'role:editor'")
    return _parse(expr)


@functools.lru_cache(maxsize=1024)
def _parse(expr: str) -> AuthExpr:
    if expr in KEYWORDS:
        return AuthExpr(kind=expr)
    if not expr.startswith(ROLE_PREFIX):
        raise InvalidAuthExpression(
            expr, "use 'public', 'user', 'internal' or 'role:<role>[,<role>...]' (no spaces)"
        )
    names = expr[len(ROLE_PREFIX) :].split(",")
    if names == [""]:
        raise InvalidAuthExpression(expr, "list at least one role after 'role:', e.g. 'role:editor'")
    seen: set[str] = set()
    for name in names:
        if not _ROLE_NAME.fullmatch(name):
            raise InvalidAuthExpression(
                expr,
                f"role name {name!r} must match {ROLE_NAME_PATTERN}: use lowercase letters, digits and "
                "underscores, starting with a letter, separated by commas without spaces",
            )
        if name in seen:
            raise InvalidAuthExpression(expr, f"role {name!r} is listed twice: list each role once")
        seen.add(name)
    return AuthExpr(kind="role", roles=frozenset(names))
