"""The caller: who is asking, as every permission check in the platform sees them."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from enum import Enum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.caches import BoundedCache
from tenants.authority import standing
from tenants.exceptions import InvalidToken
from tenants.lookups import token_with_user
from tenants.models import ApiToken, Tenant
from tenants.tokens import check_token, parse_token


@dataclass(frozen=True)
class Caller:
    """An immutable snapshot of a caller's identity and rights in one tenant.

    ``is_service`` marks a service principal: an app job's identity (username ``job:<app>/<job>``),
    a member holding exactly its roles, authenticated without a user account (``user_id`` is None).
    ``oauth_grant_id`` and ``oauth_client_id`` name the OAuth connection a caller came through.
    ``agent_name`` and ``agent_run_id`` name the tenant agent, and its run, acting for this caller:
    its tool calls are audited under them.
    """

    tenant_id: int
    user_id: int | None = None
    username: str | None = None
    is_member: bool = False
    is_superuser: bool = False
    is_tenant_admin: bool = False
    roles: frozenset[str] = field(default_factory=frozenset)
    token_id: int | None = None
    read_only: bool = False
    is_service: bool = False
    oauth_grant_id: int | None = None
    oauth_client_id: str | None = None
    agent_name: str | None = None
    agent_run_id: str | None = None

    @property
    def is_authenticated(self) -> bool:
        return self.user_id is not None or self.is_service

    @property
    def person_key(self) -> str:
        """Who this is, whatever credential they came with: ``user:<id>``, ``service:<username>``
        (an app job) or ``anonymous``. A per-user rate limit counts by it."""
        if self.user_id is not None:
            return f"user:{self.user_id}"
        if self.is_service:
            return f"service:{self.username}"
        return "anonymous"

    @property
    def credential_key(self) -> str:
        """Which credential this caller came with: ``token:<id>`` (an API token), ``grant:<id>`` (an
        OAuth connection), else the ``person_key`` (a signed-in session, an app job).

        The one rule for "the same credential": who may ride an MCP session, answer a confirmation
        or read a task (stored as ``ToolTask.owner``). A token and a grant are never both set.
        """
        if self.token_id is not None:
            return f"token:{self.token_id}"
        if self.oauth_grant_id is not None:
            return f"grant:{self.oauth_grant_id}"
        return self.person_key

    def as_handler_user(self) -> dict | None:
        """The ``request.user`` a handler sees."""
        if not self.is_authenticated:
            return None
        return {"username": self.username, "roles": sorted(self.roles), "superuser": self.is_superuser}


def anonymous_caller(tenant: Tenant) -> Caller:
    return Caller(tenant_id=tenant.pk)


def caller_for(
    tenant: Tenant, user: AbstractBaseUser | AnonymousUser, token: ApiToken | None = None
) -> Caller:
    """The caller ``user`` is in ``tenant`` (one query for the membership: ``authority.standing``)."""
    if not user.is_authenticated or not user.is_active:
        return anonymous_caller(tenant)
    found = standing(tenant, user)
    membership = found.membership
    return Caller(
        tenant_id=tenant.pk,
        user_id=user.pk,
        username=user.get_username(),
        is_member=membership is not None,
        is_superuser=user.is_superuser,
        is_tenant_admin=found.is_admin,
        roles=frozenset(membership.roles if membership else ()),
        token_id=token.pk if token else None,
        read_only=bool(token and token.read_only),
    )


class CallerCache:
    """The callers this process resolved, by credential, each valid only under the stamp it was made at.

    The key names the credential (``secret_digest`` of a secret, or a grant's id), never a secret.

    A stamp holds everything a caller was derived from: the tenant's ``state_key`` (which every
    membership, role and setting change moves) and the facts of the credential and its user read
    fresh on this request. So a hit saves the membership lookup and nothing else: revocation,
    expiry and deactivation are checked on the fresh row before the cache is asked, and any other
    change gives another stamp.
    """

    MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self._entries: BoundedCache[str, tuple[Hashable, Caller]] = BoundedCache(self.MAX_ENTRIES)

    def get(self, key: str, stamp: Hashable) -> Caller | None:
        found = self._entries.get(key)
        return found[1] if found is not None and found[0] == stamp else None

    def put(self, key: str, stamp: Hashable, caller: Caller) -> Caller:
        self._entries.put(key, (stamp, caller))
        return caller

    def clear(self) -> None:
        self._entries.clear()


def secret_digest(credential: str) -> str:
    """What a credential is cached under: its hash, so no secret sits in memory longer than a request."""
    return hashlib.sha256(credential.encode()).hexdigest()


callers = CallerCache()


class Unread(Enum):
    """A token row not read yet (None already means "read: no such token")."""

    UNREAD = "unread"


UNREAD = Unread.UNREAD


def caller_for_token(tenant: Tenant, raw: str, token: ApiToken | None | Unread = UNREAD) -> Caller:
    """The caller a bearer token proves in ``tenant``: one lookup of the token, cached membership.

    ``token``: its row (``token_with_user``'s shape) or None, if the caller already read it fresh.

    Raises:
        InvalidToken: the token is bad, or was issued for another tenant.
    """
    key_id, secret = parse_token(raw)
    token = check_token(token_with_user(key_id) if token is UNREAD else token, secret)
    if token.tenant_id != tenant.pk:
        raise InvalidToken("issued for another tenant")
    user = token.user
    key = secret_digest(raw)
    stamp = (tenant.state_key, token.pk, token.read_only, user.pk, user.get_username(), user.is_superuser)
    cached = callers.get(key, stamp)
    if cached is not None:
        return cached
    return callers.put(key, stamp, caller_for(tenant, user, token))


def caller_for_grant(
    tenant: Tenant, user: AbstractBaseUser, *, grant_id: int, client_id: str, read_only: bool
) -> Caller:
    """The caller an OAuth grant acts as: its user, with the user's membership and roles now.

    The authorization server (``oauth``) has already checked the access token, its audience and
    the grant; this is where a grant becomes a caller, so role changes apply on the next call.

    Raises:
        InvalidToken: the user is inactive, or no longer a member of the tenant.
    """
    key = f"oauth-grant:{grant_id}"
    identity = (user.pk, user.get_username(), user.is_superuser, user.is_active)
    stamp = (tenant.state_key, identity, client_id, read_only)
    caller = callers.get(key, stamp)
    if caller is None:
        caller = caller_for(tenant, user)
        if not caller.is_authenticated or not caller.is_member:
            raise InvalidToken("the grant's user is not an active member of the tenant")
        caller = replace(caller, read_only=read_only, oauth_grant_id=grant_id, oauth_client_id=client_id)
        callers.put(key, stamp, caller)
    return caller
