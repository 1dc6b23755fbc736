"""Who a run acts as: the member who started it, or the agent's service member; read fresh per slice."""

from __future__ import annotations

from dataclasses import replace

from agents.exceptions import AgentError
from agents.models import Agent, AgentRun
from tenants.callers import Caller, caller_for
from tenants.models import Tenant


class StarterGone(AgentError):
    """The member who started an as-caller run is no longer an active member of the tenant."""

    status, code = 409, "starter_not_a_member"

    def __init__(self) -> None:
        super().__init__("the member who started the run is no longer an active member of the tenant")


def service_member(tenant: Tenant, agent: Agent) -> Caller:
    """The agent's service member: a member holding exactly its ``service_roles``, never an admin."""
    return Caller(
        tenant_id=tenant.pk,
        username=f"agent:{agent.name}",
        is_member=True,
        is_service=True,
        roles=frozenset(agent.service_roles),
    )


def run_caller(tenant: Tenant, agent: Agent, run: AgentRun) -> Caller:
    """The caller the run's tool calls act as now, tagged with the agent and the run for the audit.

    As-caller runs take the starter's membership as it is now, so a role taken away between two
    slices (an approval can wait for hours) applies to the next call.

    Raises:
        StarterGone: an as-caller run whose starter left the tenant or was deactivated.
    """
    if agent.run_as == Agent.RunAs.SERVICE:
        caller = service_member(tenant, agent)
    else:
        if run.user is None:
            raise StarterGone()
        caller = caller_for(tenant, run.user)
        if not caller.is_member and not caller.is_superuser:
            raise StarterGone()
    return replace(caller, agent_name=agent.name, agent_run_id=run.run_id)


def audit_caller(agent: Agent, run: AgentRun) -> Caller:
    """Who an audit row of the run names when nothing runs (a denied call): no membership check, so
    a call held for a member who has since left can still be denied and audited."""
    user_id = None if agent.run_as == Agent.RunAs.SERVICE else run.user_id
    return Caller(tenant_id=run.tenant_id, user_id=user_id, agent_name=agent.name, agent_run_id=run.run_id)
