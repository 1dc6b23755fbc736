"""Caps per credential, per member and per tenant: the one rule of what a caller may hold open.

MCP sessions (``transport.sessions``) and listen streams (``protocol.listen_streams``) each count
against the credential that opened them (``Caller.credential_key``), that credential's member (all
their credentials, ``Caller.person_key``) and the tenant, checked in that order, so no one caller
takes a tenant's whole share and no tenant the process's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from tenants.callers import Caller

SCOPES = ("token", "member", "tenant")
WHO = {"token": "this credential", "member": "this member", "tenant": "this workspace"}


class Owned(Protocol):
    """Something held open: the credential and the member it counts against."""

    @property
    def principal(self) -> str: ...

    @property
    def member(self) -> str: ...


@dataclass(frozen=True)
class Owner:
    """Whom what a caller opens counts against: its credential, and that credential's member."""

    principal: str
    member: str

    @classmethod
    def of(cls, caller: Caller) -> Owner:
        return cls(principal=caller.credential_key, member=caller.person_key)

    def key(self, scope: str) -> str:
        """This owner at ``scope``: its credential, its member, or (the tenant) nobody in particular."""
        return {"token": self.principal, "member": self.member}.get(scope, "")


def counts_against(scope: str, owner: Owned, held: Owned) -> bool:
    """Whether ``held`` counts against ``owner``'s cap at ``scope``."""
    if scope == "token":
        return held.principal == owner.principal
    if scope == "member":
        return held.member == owner.member
    return True


@dataclass(frozen=True)
class OwnerCaps:
    per_token: int
    per_member: int
    per_tenant: int

    def scopes(self) -> tuple[tuple[str, int], ...]:
        """Each scope with its cap, in the order they are checked."""
        return (("token", self.per_token), ("member", self.per_member), ("tenant", self.per_tenant))


def caps_setting(prefix: str) -> dict[str, int]:
    """The settings ``<prefix>_PER_TOKEN``, ``_PER_MEMBER`` and ``_PER_TENANT``, as ``OwnerCaps``' fields.

    Raises:
        ImproperlyConfigured: a cap below 1.
    """
    caps = {f"per_{scope}": getattr(settings, f"{prefix}_PER_{scope.upper()}") for scope in SCOPES}
    if min(caps.values()) < 1:
        raise ImproperlyConfigured(
            f"{prefix}_PER_TOKEN, {prefix}_PER_MEMBER and {prefix}_PER_TENANT must be >= 1"
        )
    return caps


def seconds_setting(name: str) -> float:
    """The setting ``name``, a positive number of seconds.

    Raises:
        ImproperlyConfigured: not finite, or not above 0.
    """
    value = float(getattr(settings, name))
    if not (math.isfinite(value) and value > 0):
        raise ImproperlyConfigured(f"{name} must be a positive number of seconds")
    return value
