"""Who may run an agent and approve its held calls: the agent's ``runners`` rule, in one place.

``runners`` is an auth expression in the routes' language (``apps_runtime.auth_expr``), limited to
``user`` (every member) and ``role:a,b`` (members holding one of the roles): ``public`` and
``internal`` mean nothing here, since a run always has a member behind it. Blank (``""``; the API
also takes null) is the default, which depends on who the agent runs as:

- ``run_as: service``: tenant admins only. The run acts with roles an admin chose, which the
  starter may not hold; letting every member borrow them is an admin's explicit choice.
- ``run_as: caller``: every member. The run acts with the starter's own rights, so it can do
  nothing the member could not do with a token.

Tenant admins and platform superusers pass every rule: they may change it anyway. The rule is
checked when a run starts, again each time a queued or held run continues (with the starter's
membership as it is then), and for each approval of a held call (a denial or a cancel only takes
authority away, so whoever may see the run may still do those).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from agents.models import Agent
from apps_runtime.auth_expr import InvalidAuthExpression, parse_auth
from tenants.callers import Caller, caller_for
from tenants.models import Tenant

RUNNERS_MAX = 4000
RUNNERS_RULE = (
    "who may run the agent: '' (the default: tenant admins for a service agent, every member for one "
    "that runs as the caller), 'user' (every member) or 'role:<role>[,<role>...]' (no spaces)"
)


def runners_problem(value: object) -> str | None:
    """What is wrong with ``value`` (already normalized: None is ``""``) as an agent's ``runners``; None
    when it is fine."""
    if value == "":
        return None
    if not isinstance(value, str) or len(value) > RUNNERS_MAX:
        return f"{RUNNERS_RULE}; at most {RUNNERS_MAX} characters"
    try:
        expr = parse_auth(value)
    except InvalidAuthExpression as err:
        return f"{err.reason}; {RUNNERS_RULE}"
    if expr.kind not in ("user", "role"):
        return f"'{expr.kind}' is not allowed here: {RUNNERS_RULE}"
    return None


def _effective(agent: Agent) -> str | None:
    """The agent's rule with the default filled in; None: tenant admins only."""
    if agent.runners:
        return agent.runners
    return None if agent.run_as == Agent.RunAs.SERVICE else "user"


def describe_runners(agent: Agent) -> str:
    """The rule in words, for messages and the console."""
    rule = _effective(agent)
    if rule is None:
        return "tenant admins only"
    expr = parse_auth(rule)
    if expr.kind == "user":
        return "every member"
    return "members with the role " + " or ".join(sorted(expr.roles)) + ", and tenant admins"


def rule_allows(agent: Agent, caller: Caller) -> bool:
    """Whether ``caller`` (a person's caller in the agent's tenant, read fresh) may run ``agent``."""
    if caller.is_tenant_admin or caller.is_superuser:
        return True
    if not caller.is_member:
        return False
    rule = _effective(agent)
    return rule is not None and parse_auth(rule).allows(caller)


def may_run(tenant: Tenant, agent: Agent, user: AbstractBaseUser | None) -> bool:
    """Whether ``user`` may run ``agent`` (and approve its runs' held calls) now; one query."""
    return user is not None and rule_allows(agent, caller_for(tenant, user))
