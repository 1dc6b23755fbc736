"""Who a scheduled job's run acts as: its service principal (stored on the run as a snapshot,
``Caller.to_snapshot``, and re-derived for each attempt by ``tenants.callers.caller_now``)."""

from __future__ import annotations

from apps_runtime.auth_expr import parse_auth
from tenants.callers import Caller


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
