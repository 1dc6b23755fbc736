"""Errors of the agents domain; each carries its HTTP status and code (``core.problems`` renders them)."""

from __future__ import annotations

from core.errors import DomainError


class AgentError(DomainError):
    """Base of every agents error; its message is safe to show to the caller."""

    status = 400
    code = "agent_error"


class AgentNotFound(AgentError):
    """No agent of that name in the tenant."""

    status, code = 404, "agent_not_found"

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"unknown agent '{name}'")


class RunNotFound(AgentError):
    """No such run of the agent, or one the caller may not see (one error for both)."""

    status, code = 404, "run_not_found"

    def __init__(self, run_id: str):
        self.run_id = run_id
        super().__init__(f"unknown run '{run_id}'")


class InvalidAgent(AgentError):
    """An agent definition that breaks its rules; ``problems`` lists every one as (field, message)."""

    status, code = 422, "invalid_agent"

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))

    def problem_members(self) -> dict:
        return {"problems": [{"field": field, "message": message} for field, message in self.problems]}


class UnknownProvider(AgentError):
    """A provider name the operator did not list (``AGENT_PROVIDERS``)."""

    code = "unknown_provider"

    def __init__(self, name: str, known: list[str]):
        self.name = name
        listed = ", ".join(known) or "none: the operator has not listed any (AGENT_PROVIDERS)"
        super().__init__(f"unknown provider '{name}' (listed: {listed})")


class ProviderKeyMissing(AgentError):
    """The tenant stored no API key for the agent's provider."""

    status, code = 409, "provider_key_missing"

    def __init__(self, provider: str):
        self.provider = provider
        super().__init__(
            f"no API key stored for provider '{provider}': a tenant admin sets it first "
            f"(PUT /api/tenants/<slug>/agent-providers/{provider}/key)"
        )


class BudgetExhausted(AgentError):
    """The tenant's daily agent budget (runs or tokens) is spent; nothing was started."""

    status, code = 429, "agent_budget_exhausted"

    def __init__(self, setting: str, limit: int, used: int):
        self.setting, self.limit, self.used = setting, limit, used
        super().__init__(
            f"the tenant's daily agent budget is spent: {used} of {limit} ({setting}, UTC day); "
            "nothing was started"
        )


class RunFinished(AgentError):
    """The run already ended: it cannot be cancelled or approved any more."""

    status, code = 409, "run_finished"

    def __init__(self, run_id: str, status: str):
        self.run_id, self.run_status = run_id, status
        super().__init__(f"run '{run_id}' already ended ({status})")


class NoPendingApproval(AgentError):
    """The step is not a tool call waiting for approval."""

    status, code = 409, "no_pending_approval"

    def __init__(self, run_id: str, step: int):
        self.run_id, self.step = run_id, step
        super().__init__(f"step {step} of run '{run_id}' is not waiting for an approval")


class NotAllowed(AgentError):
    """The caller may not do this with the agent (e.g. a non-member starting a run)."""

    status, code = 403, "permission_denied"


class NotARunner(AgentError):
    """The member may not run this agent: its ``runners`` rule leaves them out (``agents.runners``)."""

    status, code = 403, "permission_denied"

    def __init__(self, agent: str, who: str, *, doing: str = "run"):
        self.agent, self.who, self.doing = agent, who, doing
        super().__init__(
            f"you may not {doing} agent '{agent}': it may be run by {who} (a tenant admin sets who "
            "in the agent's 'runners')"
        )


class StarterNoLongerARunner(AgentError):
    """The member who started a run may no longer run its agent: the run does not go on."""

    status, code = 409, "starter_not_a_runner"

    def __init__(self, agent: str, who: str):
        self.agent, self.who = agent, who
        super().__init__(
            f"the member who started the run may no longer run agent '{agent}' (it may be run by {who})"
        )
