"""Who a run acts as: a snapshot stored on the run, rebuilt into a ``Caller`` for every attempt."""

from __future__ import annotations

from typing import Any

from apps_runtime.auth_expr import parse_auth
from tenants.callers import Caller

_FIELDS = (
    "user_id",
    "username",
    "is_member",
    "is_superuser",
    "is_tenant_admin",
    "token_id",
    "read_only",
    "is_service",
)


def snapshot(caller: Caller) -> dict[str, Any]:
    """The caller as JSON, without its tenant (the run's own tenant is the only one it may act in)."""
    data = {name: getattr(caller, name) for name in _FIELDS}
    data["roles"] = sorted(caller.roles)
    return data


def caller_from_snapshot(tenant_id: int, data: dict[str, Any]) -> Caller:
    """The caller a run was queued as, in the run's tenant."""
    return Caller(
        tenant_id=tenant_id,
        roles=frozenset(data.get("roles") or ()),
        **{name: data[name] for name in _FIELDS if name in data},
    )


def job_principal(tenant_id: int, app_name: str, job_name: str, run_as: str) -> Caller:
    """The service principal of a scheduled job: a member holding exactly the ``runAs`` roles.

    Never a superuser and never a tenant admin, whatever roles it names.
    """
    return Caller(
        tenant_id=tenant_id,
        username=f"job:{app_name}/{job_name}",
        is_member=True,
        is_service=True,
        roles=parse_auth(run_as).roles,
    )
