"""The caller: who is asking, as every permission check in the platform sees them."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.caches import BoundedCache
from tenants.authority import standing
from tenants.exceptions import InvalidToken
from tenants.lookups import token_with_user
from tenants.models import ApiToken, Tenant
from tenants.tokens import check_token, check_token_usable, parse_token


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
    # A connection narrowed to some apps (a token's ``apps``, an OAuth grant's ``app:<name>`` scopes):
    # the names it carries, sorted, or None for all; ``read_apps``: those it carries read-only.
    apps: tuple[str, ...] | None = None
    read_apps: tuple[str, ...] = ()

    def carries(self, app_name: str | None, read_only: bool) -> bool:
        """Whether this connection carries the app ``app_name`` for a use that only reads
        (``read_only``) or writes: the one rule of narrowed connections, which every catalog (tools,
        resources, prompts, search, code mode) applies with the member's own rights. ``app_name``
        None (a built-in) is carried."""
        if self.apps is None or app_name is None:
            return True
        return app_name in self.apps and (read_only or app_name not in self.read_apps)

    def scope_for(self, app_name: str, read_only: bool) -> str:
        """The OAuth scope a connection needs to carry this use of ``app_name`` (the step-up's)."""
        return f"app:{app_name}:read" if read_only else f"app:{app_name}"

    def widened(self) -> Caller:
        """The same member on a connection that carries every app: what they may use at all."""
        return replace(self, apps=None, read_apps=())

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

    def to_snapshot(self) -> dict[str, Any]:
        """The caller as JSON, without its tenant: what a stored job run or task acts as (the row's
        own tenant is the only one it may act in)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("tenant_id", "roles")}
        data["roles"] = sorted(self.roles)
        return data

    @classmethod
    def from_snapshot(cls, tenant_id: int, data: dict[str, Any]) -> Caller:
        """The caller ``to_snapshot`` stored, in ``tenant_id`` (keys it does not know are ignored)."""
        known = {f.name for f in fields(cls)} - {"tenant_id", "roles"}
        values = {name: value for name, value in data.items() if name in known}
        if values.get("apps") is not None:
            values["apps"] = tuple(values["apps"])
        values["read_apps"] = tuple(values.get("read_apps") or ())
        return cls(tenant_id=tenant_id, roles=frozenset(data.get("roles") or ()), **values)


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
        is_superuser=bool(getattr(user, "is_superuser", False)),
        is_tenant_admin=found.is_admin,
        roles=frozenset(membership.roles if membership else ()),
        token_id=token.pk if token else None,
        read_only=bool(token and token.read_only),
        apps=tuple(sorted(token.apps)) if token and token.apps else None,
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
    apps = tuple(sorted(token.apps or ()))
    stamp = (
        tenant.state_key,
        token.pk,
        token.read_only,
        apps,
        user.pk,
        user.get_username(),
        user.is_superuser,
    )
    cached = callers.get(key, stamp)
    if cached is not None:
        return cached
    return callers.put(key, stamp, caller_for(tenant, user, token))


def narrowing_of_scopes(
    scopes: list[str] | tuple[str, ...],
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The ``Caller.apps`` and ``Caller.read_apps`` of a connection's app scopes (``app:<name>``,
    ``app:<name>:read``); no scope at all: every app (None)."""
    if not scopes:
        return None, ()
    full = {s[4:] for s in scopes if s.startswith("app:") and not s.endswith(":read")}
    read = {s[4:-5] for s in scopes if s.startswith("app:") and s.endswith(":read")} - full
    return tuple(sorted(full | read)), tuple(sorted(read))


def caller_for_grant(
    tenant: Tenant,
    user: AbstractBaseUser,
    *,
    grant_id: int,
    client_id: str,
    read_only: bool,
    scopes: tuple[str, ...] = (),
) -> Caller:
    """The caller an OAuth grant acts as: its user, with the user's membership and roles now.

    The authorization server (``oauth``) has already checked the access token, its audience and
    the grant; this is where a grant becomes a caller, so role changes apply on the next call.

    Raises:
        InvalidToken: the user is inactive, or no longer a member of the tenant.
    """
    key = f"oauth-grant:{grant_id}"
    identity = (user.pk, user.get_username(), getattr(user, "is_superuser", False), user.is_active)
    scopes = tuple(sorted(scopes))
    stamp = (tenant.state_key, identity, client_id, read_only, scopes)
    caller = callers.get(key, stamp)
    if caller is None:
        caller = caller_for(tenant, user)
        if not caller.is_authenticated or not caller.is_member:
            raise InvalidToken("the grant's user is not an active member of the tenant")
        apps, read_apps = narrowing_of_scopes(scopes)
        caller = replace(
            caller,
            read_only=read_only,
            oauth_grant_id=grant_id,
            oauth_client_id=client_id,
            apps=apps,
            read_apps=read_apps,
        )
        callers.put(key, stamp, caller)
    return caller


# The OAuth connection a grant id names in a tenant, as its user and whether it is read-only, or None
# when it is revoked or gone. The authorization server (``oauth``, above this package) registers it
# in its ``AppConfig.ready``.
GrantLookup = Callable[[Tenant, int], tuple[AbstractBaseUser, bool, tuple[str, ...]] | None]
_grant_lookup: GrantLookup | None = None


def register_grant_lookup(lookup: GrantLookup) -> None:
    global _grant_lookup
    _grant_lookup = lookup


def caller_now(tenant: Tenant, snapshot: dict[str, Any]) -> Caller | None:
    """A stored caller (``Caller.to_snapshot``) with their rights now; None when they no longer hold.

    Background work (a job run, an MCP task, an agent run's next slice) may start minutes or hours
    after whoever queued it: it acts with that person's membership and roles as they are now, and
    not at all once they left the tenant or their credential is gone. The credential is checked by
    the rules of a live request: a token by ``tokens.check_token_usable`` (revoked, expired, inactive
    user), an OAuth grant by its connection and ``caller_for_grant``, a session's user by being
    active. A service principal (an app job's, an agent's) and an anonymous caller hold no rights a
    person could lose: they come back as stored. Agent tags (``agent_name``, ``agent_run_id``) stay.

    Raises:
        TypeError, ValueError: the snapshot is not one ``to_snapshot`` wrote.
    """
    stored = Caller.from_snapshot(tenant.pk, snapshot)
    if stored.is_service or not stored.is_authenticated:
        return stored
    try:
        caller = _caller_of_credential(tenant, stored)
    except InvalidToken:
        return None
    if caller is None or not (caller.is_member or caller.is_superuser):
        return None
    return replace(caller, agent_name=stored.agent_name, agent_run_id=stored.agent_run_id)


def _caller_of_credential(tenant: Tenant, stored: Caller) -> Caller | None:
    if stored.token_id is not None:
        token = ApiToken.objects.for_tenant(tenant).select_related("user").filter(pk=stored.token_id).first()
        if token is None:
            return None
        return caller_for(tenant, check_token_usable(token).user, token)
    if stored.oauth_grant_id is not None:
        grant = _grant_lookup(tenant, stored.oauth_grant_id) if _grant_lookup is not None else None
        if grant is None:
            return None
        user, read_only, scopes = grant
        return caller_for_grant(
            tenant,
            user,
            grant_id=stored.oauth_grant_id,
            client_id=stored.oauth_client_id or "",
            read_only=read_only,
            scopes=scopes,
        )
    if stored.user_id is None:
        return None
    person = get_user_model().objects.filter(pk=stored.user_id, is_active=True).first()
    return caller_for(tenant, person) if person is not None else None
