"""Who a run acts as: the member who started it, or the agent's service member; read fresh per slice."""

from __future__ import annotations

from dataclasses import replace

from agents.exceptions import AgentError, StarterNoLongerARunner
from agents.models import Agent, AgentRun
from agents.runners import describe_runners, rule_allows
from tenants.callers import Caller, caller_now
from tenants.models import Tenant


class StarterGone(AgentError):
    """The member who started a run is no longer an active member of the tenant."""

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

    Every slice reads the starter's membership as it is now (``tenants.callers.caller_now``) and
    asks the agent's ``runners`` rule again, whoever the run acts as: a role taken away between two
    slices (an approval can wait for hours) applies to the next call, and a service run ends once its
    starter may no longer run it.

    Raises:
        StarterGone: the starter left the tenant, was deactivated or deleted.
        StarterNoLongerARunner: the starter is a member the agent's rule now leaves out.
    """
    starter = caller_now(tenant, {"user_id": run.user_id}) if run.user_id is not None else None
    if starter is None:
        raise StarterGone()
    if not rule_allows(agent, starter):
        raise StarterNoLongerARunner(agent.name, describe_runners(agent))
    caller = service_member(tenant, agent) if agent.run_as == Agent.RunAs.SERVICE else starter
    return replace(caller, agent_name=agent.name, agent_run_id=run.run_id)


def audit_caller(agent: Agent, run: AgentRun) -> Caller:
    """Who an audit row of the run names when nothing runs (a denied call): no membership check, so
    a call held for a member who has since left can still be denied and audited."""
    user_id = None if agent.run_as == Agent.RunAs.SERVICE else run.user_id
    return Caller(tenant_id=run.tenant_id, user_id=user_id, agent_name=agent.name, agent_run_id=run.run_id)
